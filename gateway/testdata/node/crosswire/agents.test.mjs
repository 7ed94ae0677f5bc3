// @openai/agents with its default settings (the Responses API, the client
// made from OPENAI_BASE_URL and OPENAI_API_KEY) running a tool-calling
// agent against the gateway (GATEWAY §8.9). Models (node_crosswire_test.go):
//   agents (-cut-early, -cut-late)       primary up/down-agents (500), backup an/weather-agents (Messages)
//   agents-chat (-cut-early, -cut-late)  primary up/down-agents-chat (500), backup
//                                        chat/weather-agents-chat (an upstream serving chat completions only)
// -cut-early: the backup's stream breaks before content and the next entry
// serves; -cut-late: it breaks after "first ", no other entry. The gateway's
// side (x-loopctl-translated, the backups' requests) is checked by the Go test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, run, tool } from '@openai/agents';
import { z } from 'zod';
import './shared.mjs';

const cities = [];
const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => { cities.push(city); return `sunny in ${city}`; },
});
const agent = (model) => new Agent({ name: 'forecaster', instructions: 'Answer with the tool.', model, tools: [getWeather] });

for (const [model, backup] of [['agents', 'Claude (Messages)'], ['agents-chat', 'a chat-only upstream']]) {
  test(`a tool-calling agent served by ${backup}: run, then run streamed`, async () => {
    cities.length = 0;
    const result = await run(agent(model), 'What is the weather in Paris?');
    assert.equal(result.finalOutput, 'the weather is sunny');
    const calls = result.newItems.filter((i) => i.type === 'tool_call_item');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].rawItem.name, 'get_weather');
    assert.deepEqual(JSON.parse(calls[0].rawItem.arguments), { city: 'Paris' });
    const streamed = await run(agent(model), 'And now?', { stream: true });
    let text = '';
    for await (const ev of streamed.toTextStream()) text += ev;
    await streamed.completed;
    assert.equal(streamed.finalOutput, 'the weather is sunny');
    assert.equal(text, 'the weather is sunny');
    assert.deepEqual(cities, ['Paris', 'Paris']);
  });

  test(`served by ${backup}: a backup stream cut before content, an invisible failover`, async () => {
    const streamed = await run(agent(model + '-cut-early'), 'What is the weather in Paris?', { stream: true });
    await streamed.completed;
    assert.equal(streamed.finalOutput, 'the weather is sunny');
  });

  test(`served by ${backup}: a backup stream cut after content, the run fails`, async () => {
    await assert.rejects((async () => {
      const streamed = await run(agent(model + '-cut-late'), 'hi', { stream: true });
      for await (const _ of streamed) { /* drain */ }
      await streamed.completed;
      if (streamed.error) throw streamed.error;
      assert.fail(`the run ended with ${JSON.stringify(streamed.finalOutput)}`);
    })(), (err) => {
      // the Responses error event the gateway sends when the stream breaks
      console.log(`${model}-cut-late: ${err?.constructor?.name}: ${err?.message}`);
      assert.match(String(err?.message), /stream/i);
      return true;
    });
  });
}
