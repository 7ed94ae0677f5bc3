// @anthropic-ai/sdk (Messages) against the gateway, served by an OpenAI
// chat completions backup (GATEWAY §8.9). Models (node_crosswire_test.go):
//   sdk            primary an/down-sdk (529), backup up/weather-sdk
//   sdk-cut-early  the backup's stream breaks before content; up/weather-sdk-cut-early serves
//   sdk-cut-late   the backup's stream breaks after "first " (no other entry)
// The backup answers "hello from b", or calls the offered tool with
// {"city":"Paris"}, then says "the weather is sunny" once the result is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { root, apiKey, recorder, served } from './shared.mjs';

const rec = recorder();
const anthropic = new Anthropic({ baseURL: root, apiKey, maxRetries: 0, fetch: rec.fetch });
const hi = [{ role: 'user', content: 'hi' }];
const tools = [{ name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const SIGNATURE = 'crosswire-signature-never-forwarded'; // node_crosswire_test.go checks the backup never got it

test('messages.create: plain text from the chat backup', async () => {
  const msg = await anthropic.messages.create({ model: 'sdk', max_tokens: 64, messages: hi });
  assert.equal(msg.type, 'message');
  assert.equal(msg.role, 'assistant');
  assert.deepEqual(msg.content.map((b) => b.type), ['text']);
  assert.equal(msg.content[0].text, 'hello from b');
  assert.equal(msg.stop_reason, 'end_turn');
  assert.match(msg.id, /^msg_/);
  served(rec, 'up/weather-sdk', 'messages->chat');
});

test('messages.stream + finalMessage: streamed from the chat backup', async () => {
  const stream = anthropic.messages.stream({ model: 'sdk', max_tokens: 64, messages: hi });
  const deltas = [];
  stream.on('text', (t) => deltas.push(t));
  const msg = await stream.finalMessage();
  assert.equal(msg.content[0].text, 'hello from b');
  assert.equal(deltas.join(''), 'hello from b');
  assert.equal(msg.stop_reason, 'end_turn');
  served(rec, 'up/weather-sdk', 'messages->chat');
});

test('tool use round trip: tool_use, tool_result, final text', async () => {
  const ask = [{ role: 'user', content: 'weather in Paris?' }];
  const first = await anthropic.messages.create({ model: 'sdk', max_tokens: 256, tools, messages: ask });
  assert.equal(first.stop_reason, 'tool_use');
  const use = first.content.find((b) => b.type === 'tool_use');
  assert.ok(use, JSON.stringify(first.content));
  assert.equal(use.name, 'get_weather');
  assert.deepEqual(use.input, { city: 'Paris' });
  assert.match(use.id, /^[a-zA-Z0-9_-]+$/);
  served(rec, 'up/weather-sdk', 'messages->chat');
  // streamed this time, the tool call streamed too
  const streamedCall = await anthropic.messages.stream({ model: 'sdk', max_tokens: 256, tools, messages: ask }).finalMessage();
  const streamedUse = streamedCall.content.find((b) => b.type === 'tool_use');
  assert.equal(streamedCall.stop_reason, 'tool_use');
  assert.deepEqual(streamedUse?.input, { city: 'Paris' });
  const second = anthropic.messages.stream({
    model: 'sdk', max_tokens: 256, tools,
    messages: [...ask, { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C and sunny' }] }],
  });
  const final = await second.finalMessage();
  assert.equal(final.content[0].text, 'the weather is sunny');
  assert.equal(final.stop_reason, 'end_turn');
  served(rec, 'up/weather-sdk', 'messages->chat');
});

test('a history with signed thinking blocks: stripped for the chat backup, the request succeeds', async () => {
  const toolUse = { type: 'tool_use', id: 'toolu_01CrossWire', name: 'get_weather', input: { city: 'Paris' } };
  const messages = [
    { role: 'user', content: 'weather in Paris?' },
    { role: 'assistant', content: [
      { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE },
      { type: 'redacted_thinking', data: 'EuoBCoYBGAIiQL7a' + SIGNATURE },
      toolUse,
    ] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18C and sunny' }] },
  ];
  const msg = await anthropic.messages.create({
    model: 'sdk', max_tokens: 2048, tools, messages,
    thinking: { type: 'enabled', budget_tokens: 1024 },
  });
  assert.equal(msg.content.find((b) => b.type === 'text')?.text, 'the weather is sunny');
  assert.equal(msg.stop_reason, 'end_turn');
  served(rec, 'up/weather-sdk', 'messages->chat');
  // and a plain turn after a thinking + text answer, streamed
  const stream = anthropic.messages.stream({
    model: 'sdk', max_tokens: 2048,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'Say hello.', signature: SIGNATURE }, { type: 'text', text: 'hello' }] },
      { role: 'user', content: 'again' },
    ],
  });
  assert.equal(await stream.finalText(), 'hello from b');
});

test('a backup stream cut before content: an invisible failover to the next entry', async () => {
  const stream = anthropic.messages.stream({ model: 'sdk-cut-early', max_tokens: 64, messages: hi });
  const msg = await stream.finalMessage();
  assert.equal(msg.content[0].text, 'hello from b');
  served(rec, 'up/weather-sdk-cut-early', 'messages->chat');
});

test('a backup stream cut after content: the SDK throws the Messages error event', async () => {
  const stream = anthropic.messages.stream({ model: 'sdk-cut-late', max_tokens: 64, messages: hi });
  let text = '';
  stream.on('text', (t) => { text += t; });
  stream.on('error', () => {});
  await assert.rejects(stream.finalMessage(), (err) => {
    assert.ok(err instanceof Anthropic.APIError, `${err?.constructor?.name}: ${err}`);
    return true;
  });
  assert.equal(text, 'first ');
  served(rec, 'up/cutlate-sdk', 'messages->chat');
});
