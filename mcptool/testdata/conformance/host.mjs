// A host for the client scenarios of @modelcontextprotocol/conformance: an MCP
// client on @modelcontextprotocol/sdk whose one server is
// `$LOOPCTL_BIN mcp-proxy --http up=URL` over stdio, URL being the scenario's
// server (the last argument). The proxy is the client under test: this host
// only does what the scenario (MCP_CONFORMANCE_SCENARIO) needs a client's user
// to do, through it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const transport = new StdioClientTransport({
  command: process.env.LOOPCTL_BIN,
  args: ['mcp-proxy', '--http', `up=${url}`],
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
