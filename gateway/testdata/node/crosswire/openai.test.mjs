// The official openai client (chat completions) against the gateway,
// served by an Anthropic Messages backup (GATEWAY §8.9). Models
// (node_crosswire_test.go):
//   oai            primary up/down-oai (500), backup an/weather-oai
//   oai-cut-early  the backup's stream breaks before content; an/weather-oai-cut-early serves
//   oai-cut-late   the backup's stream breaks after "first " (no other entry)
// The backup answers "hello from b", or calls the offered tool with
// {"city":"Paris"}, then says "the weather is sunny" once the result is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { root, apiKey, recorder, served } from './shared.mjs';

const rec = recorder();
const openai = new OpenAI({ baseURL: root + '/v1', apiKey, maxRetries: 0, fetch: rec.fetch });
const hi = [{ role: 'user', content: 'hi' }];
const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

// collect reads a chat stream: its text, tool calls (assembled from their
// deltas), finish reason and usage.
async function collect(stream) {
  let text = '', finish = null, usage = null;
  const calls = [];
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta?.content) text += choice.delta.content;
    for (const d of choice.delta?.tool_calls ?? []) {
      calls[d.index] ??= { id: '', name: '', arguments: '' };
      if (d.id) calls[d.index].id = d.id;
      if (d.function?.name) calls[d.index].name += d.function.name;
      if (d.function?.arguments) calls[d.index].arguments += d.function.arguments;
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  return { text, calls, finish, usage };
}

test('chat.completions.create: plain text from the Claude backup', async () => {
  const res = await openai.chat.completions.create({ model: 'oai', messages: hi });
  assert.equal(res.object, 'chat.completion');
  assert.match(res.id, /^chatcmpl-/);
  assert.equal(res.choices[0].message.role, 'assistant');
  assert.equal(res.choices[0].message.content, 'hello from b');
  assert.equal(res.choices[0].finish_reason, 'stop');
  served(rec, 'an/weather-oai', 'chat->messages');
});

test('chat.completions stream, with a usage chunk', async () => {
  const stream = await openai.chat.completions.create({ model: 'oai', messages: hi, stream: true, stream_options: { include_usage: true } });
  const got = await collect(stream);
  assert.equal(got.text, 'hello from b');
  assert.equal(got.finish, 'stop');
  assert.ok(got.usage && typeof got.usage.prompt_tokens === 'number', JSON.stringify(got.usage));
  served(rec, 'an/weather-oai', 'chat->messages');
});

test('tool calls round trip: tool_calls, a tool message, final text', async () => {
  const ask = [{ role: 'user', content: 'weather in Paris?' }];
  const first = await openai.chat.completions.create({ model: 'oai', messages: ask, tools });
  const msg = first.choices[0].message;
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  assert.equal(msg.tool_calls?.length, 1, JSON.stringify(msg));
  assert.equal(msg.tool_calls[0].type, 'function');
  assert.equal(msg.tool_calls[0].function.name, 'get_weather');
  assert.deepEqual(JSON.parse(msg.tool_calls[0].function.arguments), { city: 'Paris' });
  served(rec, 'an/weather-oai', 'chat->messages');
  // the call streamed: id and name on its first fragment, the arguments assembled
  const streamed = await collect(await openai.chat.completions.create({ model: 'oai', messages: ask, tools, stream: true }));
  assert.equal(streamed.finish, 'tool_calls');
  assert.equal(streamed.calls.length, 1);
  assert.equal(streamed.calls[0].name, 'get_weather');
  assert.ok(streamed.calls[0].id);
  assert.deepEqual(JSON.parse(streamed.calls[0].arguments), { city: 'Paris' });
  // the result goes back, streamed
  const final = await collect(await openai.chat.completions.create({
    model: 'oai', tools, stream: true,
    messages: [...ask, msg, { role: 'tool', tool_call_id: msg.tool_calls[0].id, content: '18C and sunny' }],
  }));
  assert.equal(final.text, 'the weather is sunny');
  assert.equal(final.finish, 'stop');
  served(rec, 'an/weather-oai', 'chat->messages');
});

test('a backup stream cut before content: an invisible failover to the next entry', async () => {
  const got = await collect(await openai.chat.completions.create({ model: 'oai-cut-early', messages: hi, stream: true }));
  assert.equal(got.text, 'hello from b');
  assert.equal(got.finish, 'stop');
  served(rec, 'an/weather-oai-cut-early', 'chat->messages');
});

test('a backup stream cut after content: the chat error chunk, the SDK throws', async () => {
  const stream = await openai.chat.completions.create({ model: 'oai-cut-late', messages: hi, stream: true });
  let text = '';
  await assert.rejects((async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  })(), (err) => {
    assert.ok(err instanceof OpenAI.APIError, `${err?.constructor?.name}: ${err}`);
    return true;
  });
  assert.equal(text, 'first ');
  served(rec, 'an/cutlate-oai', 'chat->messages');
});
