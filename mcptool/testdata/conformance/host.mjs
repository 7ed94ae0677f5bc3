// A host for the client scenarios of @modelcontextprotocol/conformance: an MCP
// client on @modelcontextprotocol/sdk whose one server is
// `$LOOPCTL_BIN mcp-proxy --http up=URL` over stdio, URL being the scenario's
// server (the last argument). The proxy is the client under test: this host
// only does what the scenario (MCP_CONFORMANCE_SCENARIO) needs a client's user
// to do, through it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';

// login runs `loopctl mcp-proxy login up --config cfg` and plays the browser:
// it opens the authorization URL the command prints and follows the
// authorization server's redirect to the command's loopback listener.
async function login(cfg) {
  const child = spawn(process.env.LOOPCTL_BIN, ['mcp-proxy', 'login', 'up', '--config', cfg, '--wait', '15s'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  for await (const line of createInterface({ input: child.stdout })) {
    console.error(`login: ${line}`);
    if (line.startsWith('  http')) {
      const res = await fetch(line.trim());
      console.error(`browser: ${res.status} ${await res.text()}`);
    }
  }
  const code = await exited;
  if (code !== 0) throw new Error(`mcp-proxy login exited ${code}`);
}

// An auth scenario's server is an OAuth-protected upstream: the proxy logs in
// first, then serves it with the stored token.
let args = ['mcp-proxy', '--http', `up=${url}`];
if (scenario.startsWith('auth/')) {
  const dir = mkdtempSync(join(tmpdir(), 'loopctl-auth-'));
  const cfg = join(dir, 'proxy.json');
  // A client registered beforehand (auth/pre-registration) comes in the
  // scenario's context; otherwise the proxy registers itself.
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
  const oauth = { token_file: 'token.json' };
  if (context.client_id) oauth.client_id = context.client_id;
  if (context.client_secret) oauth.client_secret = context.client_secret;
  writeFileSync(cfg, JSON.stringify({ mcpServers: { up: { url, oauth } } }));
  await login(cfg);
  args = ['mcp-proxy', '--config', cfg];
}
const transport = new StdioClientTransport({
  command: process.env.LOOPCTL_BIN,
  args,
  stderr: 'inherit',
});
// The host offers elicitation only for the scenarios about it: the proxy
// relays what its own client offers.
const elicits = scenario.startsWith('elicitation');
const client = new Client({ name: 'loopctl-conformance-host', version: '1.0.0' },
  { capabilities: elicits ? { elicitation: { form: {} } } : {} });
if (elicits) {
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
}
await client.connect(transport);
const calls = {
  tools_call: ['add_numbers', { a: 5, b: 3 }],
  'sse-retry': ['test_reconnection', {}],
  'elicitation-sep1034-client-defaults': ['test_client_elicitation_defaults', {}],
};
try {
  await client.listTools();
  if (calls[scenario]) {
    const [name, args] = calls[scenario];
    const res = await client.callTool({ name, arguments: args });
    console.log(JSON.stringify(res));
  }
} finally {
  await client.close();
}
