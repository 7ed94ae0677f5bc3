// The real clients of the other wires against the loopctl gateway. Run by
// gateway/node_wires_test.go, which starts the gateway in front of scripted
// upstreams and sets LOOPCTL_GATEWAY (the gateway's root URL),
// LOOPCTL_GATEWAY_KEY, and OPENAI_BASE_URL / OPENAI_API_KEY for the Agents
// SDK's default client. Models (see node_wires_test.go), each primary
// failing with a healthy backup that answers "hello from b" (or calls the
// offered tool, then says "the weather is sunny"):
//   gpt / claude                primary 500
//   gpt-limited / claude-limited primary 429
//   claude-overloaded           primary 529
//   gpt-cut / claude-cut        the stream breaks after its first content (no backup)
//   claude-ok                   healthy
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Agent, run, tool } from '@openai/agents';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, streamText } from 'ai';
import { z } from 'zod';

const root = process.env.LOOPCTL_GATEWAY;
const apiKey = process.env.LOOPCTL_GATEWAY_KEY;
assert.ok(root, 'LOOPCTL_GATEWAY is not set: run through go test ./gateway -run NodeWires');

const openai = new OpenAI({ baseURL: root + '/v1', apiKey, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: root, apiKey, maxRetries: 0 });
const hi = [{ role: 'user', content: 'hi' }];

test('openai responses: served by the backup', async () => {
  const { data, response } = await openai.responses.create({ model: 'gpt', input: 'hi' }).withResponse();
  assert.equal(data.output_text, 'hello from b');
  assert.equal(response.headers.get('x-loopctl-model'), 'up/b');
});

test('openai responses stream: served by the backup after a 429', async () => {
  const stream = await openai.responses.create({ model: 'gpt-limited', input: 'hi', stream: true });
  let text = '', done = false;
  for await (const ev of stream) {
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') done = true;
  }
  assert.equal(text, 'hello from b');
  assert.ok(done);
});

test('openai responses stream broken after content: an error event, response.failed', async () => {
  const stream = await openai.responses.create({ model: 'gpt-cut', input: 'hi', stream: true });
  const types = [];
  let text = '';
  try {
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'error') assert.equal(ev.code, 'stream_interrupted');
    }
  } catch (err) {
    types.push('thrown');
  }
  assert.equal(text, 'first ');
  assert.ok(types.includes('error') || types.includes('thrown'), types.join(','));
  assert.ok(!types.includes('response.completed'));
});

test('openai embeddings and models.retrieve', async () => {
  const res = await openai.embeddings.create({ model: 'gpt', input: ['a', 'b'] });
  assert.equal(res.data.length, 2);
  assert.equal(res.data[0].embedding.length, 8);
  const m = await openai.models.retrieve('claude');
  assert.equal(m.id, 'claude');
  await assert.rejects(openai.models.retrieve('nope'), (err) => err.status === 404);
});

test('@openai/agents, default settings: a tool-calling agent', async () => {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  });
  const agent = new Agent({ name: 'forecaster', instructions: 'Answer with the tool.', model: 'gpt', tools: [getWeather] });
  const result = await run(agent, 'What is the weather in Paris?');
  assert.equal(result.finalOutput, 'the weather is sunny');
  const streamed = await run(agent, 'And now?', { stream: true });
  await streamed.completed;
  assert.equal(streamed.finalOutput, 'the weather is sunny');
});

test('anthropic messages: served by the backup after a 500', async () => {
  const msg = await anthropic.messages.create({ model: 'claude', max_tokens: 64, messages: hi });
  assert.equal(msg.content[0].text, 'hello from b');
});

test('anthropic messages stream: served by the backup after a 529', async () => {
  const stream = anthropic.messages.stream({ model: 'claude-overloaded', max_tokens: 64, messages: hi });
  assert.equal(await stream.finalText(), 'hello from b');
});

test('anthropic tool-use round trip, primary 429', async () => {
  const tools = [{ name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await anthropic.messages.create({ model: 'claude-limited', max_tokens: 64, tools, messages: [{ role: 'user', content: 'weather in Paris?' }] });
  assert.equal(first.stop_reason, 'tool_use');
  const use = first.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(use.input, { city: 'Paris' });
  const second = anthropic.messages.stream({
    model: 'claude-limited', max_tokens: 64, tools,
    messages: [
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
    ],
  });
  assert.equal(await second.finalText(), 'the weather is sunny');
});

test('anthropic stream broken after content: the client gets an error', async () => {
  const stream = anthropic.messages.stream({ model: 'claude-cut', max_tokens: 64, messages: hi });
  let text = '';
  stream.on('text', (t) => { text += t; });
  await assert.rejects(stream.finalMessage());
  assert.equal(text, 'first ');
});

test('anthropic countTokens', async () => {
  const n = await anthropic.messages.countTokens({ model: 'claude-ok', messages: [{ role: 'user', content: 'hello there, gateway' }] });
  assert.ok(n.input_tokens > 0);
});

test('Vercel AI SDK, @ai-sdk/anthropic: generate, stream, a broken stream', async () => {
  const provider = createAnthropic({ baseURL: root + '/v1', apiKey });
  const { text } = await generateText({ model: provider('claude'), prompt: 'hi', maxOutputTokens: 64, maxRetries: 0 });
  assert.equal(text, 'hello from b');
  const ok = streamText({ model: provider('claude-overloaded'), prompt: 'hi', maxOutputTokens: 64, maxRetries: 0 });
  assert.equal(await ok.text, 'hello from b');
  const cut = streamText({ model: provider('claude-cut'), prompt: 'hi', maxOutputTokens: 64, maxRetries: 0, onError: () => {} });
  const parts = [];
  for await (const p of cut.fullStream) parts.push(p.type);
  assert.ok(parts.includes('error'), parts.join(','));
});
