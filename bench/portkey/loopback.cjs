// Preloaded by bench/cmd/gateway (node --require ./loopback.cjs): makes
// every server the process starts listen on 127.0.0.1 only (Portkey's
// start-server.js passes a port and no host, which would listen on every
// interface).
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[0] !== null && typeof args[0] === 'object') {
    args[0] = { ...args[0], host: '127.0.0.1' };
  } else if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (typeof args[1] === 'string' || args[1] === undefined) {
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  return listen.apply(this, args);
};
