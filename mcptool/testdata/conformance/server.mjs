// The fixture server of mcptool's conformance tests: an MCP server over
// streamable HTTP, on @modelcontextprotocol/sdk, implementing what each
// server scenario of @modelcontextprotocol/conformance asks for (its
// descriptions: `conformance list --server`, one tool, resource or prompt per
// scenario). It listens on 127.0.0.1 on a free port and prints
// "listening on http://127.0.0.1:PORT/mcp" once ready.
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import {
  CallToolRequestSchema, CompleteRequestSchema, CreateMessageResultSchema, ElicitResultSchema,
  GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
  SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// A 1x1 red PNG, and a WAV of one silent sample.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==';

const noArgs = { type: 'object', properties: {} };
const text = (t) => ({ type: 'text', text: t });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tools = [
  { name: 'test_simple_text', description: 'Returns simple text.', inputSchema: noArgs },
  { name: 'test_image_content', description: 'Returns an image.', inputSchema: noArgs },
  { name: 'test_audio_content', description: 'Returns audio.', inputSchema: noArgs },
  { name: 'test_embedded_resource', description: 'Returns an embedded resource.', inputSchema: noArgs },
  { name: 'test_multiple_content_types', description: 'Returns text, an image and a resource.', inputSchema: noArgs },
  { name: 'test_tool_with_logging', description: 'Logs three messages while it runs.', inputSchema: noArgs },
  { name: 'test_error_handling', description: 'Always fails.', inputSchema: noArgs },
  { name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100 of 100.', inputSchema: noArgs },
  { name: 'test_sampling', description: 'Asks the client for a sampling.',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] } },
  { name: 'test_elicitation', description: 'Asks the user for a username and an email.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
  { name: 'test_elicitation_sep1034_defaults', description: 'Elicits fields that all have defaults.', inputSchema: noArgs },
  { name: 'test_elicitation_sep1330_enums', description: 'Elicits the five kinds of enum.', inputSchema: noArgs },
  { name: 'test_reconnection', description: 'Closes its event stream before it answers.', inputSchema: noArgs },
  { name: 'json_schema_2020_12_tool', description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    } },
];

const defaultsSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
};

const enumsSchema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: { type: 'string', oneOf: [
      { const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' },
      { const: 'value3', title: 'Third Option' }] },
    legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: { type: 'array', items: { anyOf: [
      { const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' },
      { const: 'value3', title: 'Third Choice' }] } },
  },
};

// callTool runs one tool of the list above.
async function callTool(server, req, extra) {
  const args = req.params.arguments ?? {};
  const log = (data) => extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
  switch (req.params.name) {
    case 'test_simple_text':
      return { content: [text('This is a simple text response for testing.')] };
    case 'test_image_content':
      return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
    case 'test_audio_content':
      return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
    case 'test_embedded_resource':
      return { content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain',
        text: 'This is an embedded resource content.' } }] };
    case 'test_multiple_content_types':
      return { content: [text('Multiple content types test:'), { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }) } }] };
    case 'test_tool_with_logging':
      await log('Tool execution started');
      await sleep(50);
      await log('Tool processing data');
      await sleep(50);
      await log('Tool execution completed');
      return { content: [text('Tool with logging executed successfully')] };
    case 'test_error_handling':
      return { isError: true, content: [text('This tool intentionally returns an error for testing')] };
    case 'test_tool_with_progress': {
      const token = req.params._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
        }
        if (progress < 100) await sleep(50);
      }
      return { content: [text('Tool with progress executed successfully')] };
    }
    case 'test_sampling': {
      const res = await server.request({ method: 'sampling/createMessage', params: {
        messages: [{ role: 'user', content: text(String(args.prompt)) }], maxTokens: 100 } }, CreateMessageResultSchema);
      return { content: [text(`LLM response: ${res.content?.text ?? JSON.stringify(res.content)}`)] };
    }
    case 'test_elicitation': {
      const res = await server.request({ method: 'elicitation/create', params: { message: String(args.message),
        requestedSchema: { type: 'object', properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" } }, required: ['username', 'email'] } } },
      ElicitResultSchema);
      return { content: [text(`User response: action=${res.action}, content=${JSON.stringify(res.content ?? {})}`)] };
    }
    case 'test_elicitation_sep1034_defaults':
    case 'test_elicitation_sep1330_enums': {
      const schema = req.params.name === 'test_elicitation_sep1034_defaults' ? defaultsSchema : enumsSchema;
      const res = await server.request({ method: 'elicitation/create', params: { message: 'Please review and submit',
        requestedSchema: schema } }, ElicitResultSchema);
      return { content: [text(`Elicitation completed: action=${res.action}, content=${JSON.stringify(res.content ?? {})}`)] };
    }
    case 'test_reconnection':
      await sleep(100);
      extra.closeSSEStream?.();
      await sleep(300);
      return { content: [text('Reconnection test completed')] };
    case 'json_schema_2020_12_tool':
      return { content: [text(`Received: ${JSON.stringify(args)}`)] };
    default:
      return { isError: true, content: [text(`Unknown tool: ${req.params.name}`)] };
  }
}

const resources = [
  { uri: 'test://static-text', name: 'static-text', description: 'A static text resource.', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', description: 'A static PNG.', mimeType: 'image/png' },
  { uri: 'test://watched-resource', name: 'watched-resource', description: 'A resource to subscribe to.', mimeType: 'text/plain' },
];

function readResource(uri) {
  if (uri === 'test://static-text') {
    return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
  }
  if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
  if (uri === 'test://watched-resource') return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched.' }] };
  const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (m) {
    return { contents: [{ uri, mimeType: 'application/json',
      text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }] };
  }
  throw new Error(`Resource not found: ${uri}`);
}

const prompts = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments.' },
  { name: 'test_prompt_with_arguments', description: 'A prompt with two arguments.', arguments: [
    { name: 'arg1', description: 'First test argument', required: true },
    { name: 'arg2', description: 'Second test argument', required: true }] },
  { name: 'test_prompt_with_embedded_resource', description: 'A prompt embedding a resource.', arguments: [
    { name: 'resourceUri', description: 'URI of the resource to embed', required: true }] },
  { name: 'test_prompt_with_image', description: 'A prompt with an image.' },
];

function getPrompt(name, args = {}) {
  const user = (content) => ({ role: 'user', content });
  switch (name) {
    case 'test_simple_prompt':
      return { messages: [user(text('This is a simple prompt for testing.'))] };
    case 'test_prompt_with_arguments':
      return { messages: [user(text(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`))] };
    case 'test_prompt_with_embedded_resource':
      return { messages: [user({ type: 'resource', resource: { uri: args.resourceUri, mimeType: 'text/plain',
        text: 'Embedded resource content for testing.' } }), user(text('Please process the embedded resource above.'))] };
    case 'test_prompt_with_image':
      return { messages: [user({ type: 'image', data: PNG, mimeType: 'image/png' }), user(text('Please analyze the image above.'))] };
    default:
      throw new Error(`Prompt not found: ${name}`);
  }
}

// newServer is one session's MCP server.
function newServer() {
  const server = new Server({ name: 'loopctl-conformance-fixture', version: '1.0.0' }, {
    capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true }, logging: {}, completions: {} },
  });
  const subscriptions = new Set();
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => callTool(server, req, extra));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [
    { uriTemplate: 'test://template/{id}/data', name: 'template', description: 'Data by id.', mimeType: 'application/json' }] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => readResource(req.params.uri));
  server.setRequestHandler(SubscribeRequestSchema, async (req) => { subscriptions.add(req.params.uri); return {}; });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => { subscriptions.delete(req.params.uri); return {}; });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => getPrompt(req.params.name, req.params.arguments));
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const prefix = req.params.argument?.value ?? '';
    const values = ['paris', 'park', 'party'].filter((v) => v.startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  return server;
}

const transports = new Map(); // session id -> transport
const app = createMcpExpressApp({ host: '127.0.0.1' });

app.post('/mcp', async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = id ? transports.get(id) : undefined;
  if (!transport) {
    if (id || req.body?.method !== 'initialize') {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no valid session' }, id: null });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new InMemoryEventStore(),
      retryInterval: 500,
      onsessioninitialized: (sid) => transports.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

const bySession = async (req, res) => {
  const transport = transports.get(req.headers['mcp-session-id']);
  if (!transport) {
    res.status(400).send('Bad Request: no valid session');
    return;
  }
  await transport.handleRequest(req, res);
};
app.get('/mcp', bySession);
app.delete('/mcp', bySession);

const listener = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${listener.address().port}/mcp`);
});
process.on('SIGTERM', () => process.exit(0));
