// Real clients against the real `loopctl serve` binary with its backups on
// Amazon Bedrock, Google Vertex AI and Azure OpenAI (GATEWAY §10.3), run by
// gateway/node_clouds_test.go. Models:
//   sdk-bedrock  primary an/down (Anthropic, 529), backup bedrock/<model> (SigV4, eventstream)
//   sdk-vertex   primary an/down (Anthropic, 529), backup vertex/<model> (OAuth2 token)
//   oai-azure    primary openai/down (500), backup azure/<deployment> (api-key)
// Each backup calls the offered tool with {"city":"Paris"}, then says
// "the weather is sunny" once the result is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { root, apiKey, recorder } from '../crosswire/shared.mjs';

const rec = recorder();
const anthropic = new Anthropic({ baseURL: root, apiKey, maxRetries: 0, fetch: rec.fetch });
const openai = new OpenAI({ baseURL: root + '/v1', apiKey, maxRetries: 0, fetch: rec.fetch });
const tools = [{ name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const ask = [{ role: 'user', content: 'weather in Paris?' }];

function servedBy(prefix) {
  const last = rec.last();
  assert.equal(last.status, 200, JSON.stringify(last));
  assert.ok(last.model?.startsWith(prefix), JSON.stringify(last));
}

for (const [model, backup] of [['sdk-bedrock', 'bedrock/'], ['sdk-vertex', 'vertex/']]) {
  test(`@anthropic-ai/sdk: streamed tool use round trip, served by ${backup}`, async () => {
    const first = await anthropic.messages.stream({ model, max_tokens: 256, tools, messages: ask }).finalMessage();
    servedBy(backup);
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    assert.ok(use, JSON.stringify(first.content));
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { city: 'Paris' });
    const final = await anthropic.messages.stream({
      model, max_tokens: 256, tools,
      messages: [...ask, { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C and sunny' }] }],
    }).finalMessage();
    servedBy(backup);
    assert.equal(final.content[0].text, 'the weather is sunny');
    assert.equal(final.stop_reason, 'end_turn');
  });

  test(`@anthropic-ai/sdk: plain messages.create, served by ${backup}`, async () => {
    const msg = await anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    servedBy(backup);
    assert.equal(msg.content[0].text, 'hello from b');
  });
}

test('openai: streamed tool call round trip, served by the Azure backup', async () => {
  const fn = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: tools[0].input_schema } }];
  const messages = [{ role: 'user', content: 'weather in Paris?' }];
  const stream = await openai.chat.completions.create({ model: 'oai-azure', messages, tools: fn, stream: true });
  let name = '', args = '', id = '';
  for await (const chunk of stream) {
    for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) {
      name += tc.function?.name ?? '';
      args += tc.function?.arguments ?? '';
      id = tc.id ?? id;
    }
  }
  servedBy('azure/');
  assert.equal(name, 'get_weather');
  assert.deepEqual(JSON.parse(args), { city: 'Paris' });
  const final = await openai.chat.completions.create({
    model: 'oai-azure', tools: fn,
    messages: [...messages, { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] },
      { role: 'tool', tool_call_id: id, content: '18C and sunny' }],
  });
  servedBy('azure/');
  assert.equal(final.choices[0].message.content, 'the weather is sunny');
});

// GATEWAY §10.2's rows as the SDK sees them (node_clouds_test.go's models
// sdk-throttled, sdk-quota, sdk-early, sdk-late: a Bedrock primary failing,
// a Vertex backup).
for (const model of ['sdk-throttled', 'sdk-quota', 'sdk-early']) {
  test(`@anthropic-ai/sdk: Bedrock's ${model} fails over to the Vertex backup`, async () => {
    const msg = await anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    servedBy('vertex/');
    assert.equal(msg.content[0].text, 'hello from b');
  });
}

test('@anthropic-ai/sdk: a Bedrock exception after content ends the stream with its error event', async () => {
  const stream = anthropic.messages.stream({ model: 'sdk-late', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
  const texts = [];
  stream.on('text', (t) => texts.push(t));
  await assert.rejects(stream.finalMessage(), (err) => {
    assert.match(String(err?.message ?? err), /ModelStreamErrorException/);
    return true;
  });
  assert.deepEqual(texts, ['partial ']);
  assert.ok(rec.last().model.startsWith('bedrock/'), JSON.stringify(rec.last()));
});
