// The Vercel AI SDK against the gateway, its chains crossing wires
// (GATEWAY §8.9). Models (node_crosswire_test.go):
//   vercel (-cut-early, -cut-late)     @ai-sdk/openai (its default, the Responses API, and .chat):
//                                      primary up/down-vercel (500), backup an/weather-vercel (Messages)
//   vercel-an (-cut-early, -cut-late)  @ai-sdk/anthropic: primary an/down-vercel-an (529),
//                                      backup up/weather-vercel-an (chat completions)
// -cut-early: the backup's stream breaks before content and the next entry
// serves; -cut-late: it breaks after "first ", no other entry. The backup
// answers "hello from b", or calls the offered tool with {"city":"Paris"},
// then says "the weather is sunny" once the result is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, streamText, tool, stepCountIs } from 'ai';
import { z } from 'zod';
import { root, apiKey, recorder, served } from './shared.mjs';

const rec = recorder();
const openai = createOpenAI({ baseURL: root + '/v1', apiKey, fetch: rec.fetch });
const anthropic = createAnthropic({ baseURL: root + '/v1', apiKey, fetch: rec.fetch });
const cities = [];
const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => { cities.push(city); return `sunny in ${city}`; },
  }),
};
const common = { maxOutputTokens: 256, maxRetries: 0, tools, stopWhen: stepCountIs(3), prompt: 'weather in Paris?' };

// checkSteps asserts a tool round trip: a get_weather call, then the answer.
function checkSteps(steps, text) {
  assert.equal(text, 'the weather is sunny');
  assert.equal(steps.length, 2);
  assert.equal(steps[0].finishReason, 'tool-calls');
  assert.equal(steps[0].toolCalls[0].toolName, 'get_weather');
  assert.deepEqual(steps[0].toolCalls[0].input, { city: 'Paris' });
  assert.equal(steps[1].finishReason, 'stop');
}

test('@ai-sdk/openai (Responses API): generateText with a tool, served by Claude', async () => {
  cities.length = 0;
  const { text, steps } = await generateText({ model: openai('vercel'), ...common });
  checkSteps(steps, text);
  assert.deepEqual(cities, ['Paris']);
  served(rec, 'an/weather-vercel', 'responses->messages');
});

test('@ai-sdk/openai (Responses API): streamText with a tool, served by Claude', async () => {
  const res = streamText({ model: openai('vercel'), ...common });
  checkSteps(await res.steps, await res.text);
  served(rec, 'an/weather-vercel', 'responses->messages');
});

test('@ai-sdk/openai .chat: streamText with a tool, served by Claude', async () => {
  const res = streamText({ model: openai.chat('vercel'), ...common });
  checkSteps(await res.steps, await res.text);
  served(rec, 'an/weather-vercel', 'chat->messages');
});

test('@ai-sdk/anthropic: generateText and streamText with a tool, served by chat completions', async () => {
  const { text, steps } = await generateText({ model: anthropic('vercel-an'), ...common });
  checkSteps(steps, text);
  served(rec, 'up/weather-vercel-an', 'messages->chat');
  const res = streamText({ model: anthropic('vercel-an'), ...common });
  checkSteps(await res.steps, await res.text);
  served(rec, 'up/weather-vercel-an', 'messages->chat');
});

for (const [name, model, entry, wire] of [
  ['@ai-sdk/openai (Responses API)', () => openai('vercel-cut-early'), 'an/weather-vercel-cut-early', 'responses->messages'],
  ['@ai-sdk/openai .chat', () => openai.chat('vercel-cut-early'), 'an/weather-vercel-cut-early', 'chat->messages'],
  ['@ai-sdk/anthropic', () => anthropic('vercel-an-cut-early'), 'up/weather-vercel-an-cut-early', 'messages->chat'],
]) {
  test(`${name}: a backup stream cut before content, an invisible failover`, async () => {
    const res = streamText({ model: model(), prompt: 'hi', maxOutputTokens: 64, maxRetries: 0 });
    assert.equal(await res.text, 'hello from b');
    served(rec, entry, wire);
  });
}

for (const [name, model, entry, wire] of [
  ['@ai-sdk/openai (Responses API)', () => openai('vercel-cut-late'), 'an/cutlate-vercel', 'responses->messages'],
  ['@ai-sdk/openai .chat', () => openai.chat('vercel-cut-late'), 'an/cutlate-vercel', 'chat->messages'],
  ['@ai-sdk/anthropic', () => anthropic('vercel-an-cut-late'), 'up/cutlate-vercel-an', 'messages->chat'],
]) {
  test(`${name}: a backup stream cut after content, an error part`, async () => {
    const res = streamText({ model: model(), prompt: 'hi', maxOutputTokens: 64, maxRetries: 0, onError: () => {} });
    const parts = [];
    let text = '';
    for await (const p of res.fullStream) {
      parts.push(p.type);
      if (p.type === 'text-delta') text += p.text;
    }
    assert.ok(parts.includes('error'), parts.join(','));
    assert.equal(text, 'first ');
    served(rec, entry, wire);
  });
}
