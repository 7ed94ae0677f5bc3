// The official openai client (chat completions) through a pool mixing an
// OpenAI member and an Anthropic member (node_pools_test.go): pool/gpt =
// oa/gpt-4.1 (chat completions) and an/claude-sonnet-4-5 (Messages,
// translated). Each session (prompt_cache_key) sends whole and streamed
// requests; each member answers "hello from <upstream>".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { root, apiKey, sessions, recorder, upstreamOf } from './shared.mjs';

const rec = recorder();
const openai = new OpenAI({ baseURL: root + '/v1', apiKey, maxRetries: 0, fetch: rec.fetch });
const hi = [{ role: 'user', content: 'hi' }];

// served asserts the last answer came from a member of the pool,
// translated when the member is on the Messages wire, and returns it.
function served() {
  const last = rec.last();
  assert.equal(last.status, 200, JSON.stringify(last));
  assert.ok(['oa/gpt-4.1', 'an/claude-sonnet-4-5'].includes(last.model), JSON.stringify(last));
  assert.equal(last.translated, last.model.startsWith('an/') ? 'chat->messages' : null, JSON.stringify(last));
  assert.equal(last.attempts, 1, JSON.stringify(last));
  return last.model;
}

test('both members serve, each answer from the member x-loopctl-model names', async () => {
  const homes = new Map();
  // each session: a whole answer and a streamed one, then (once every
  // session has had its first) a whole answer again
  for (const round of [1, 2]) {
    for (const session of sessions) {
      const res = await openai.chat.completions.create({ model: 'gpt', messages: hi, prompt_cache_key: session });
      const whole = served();
      assert.equal(res.choices[0].message.content, 'hello from ' + upstreamOf(whole));
      assert.equal(res.choices[0].finish_reason, 'stop');
      if (homes.has(session)) assert.equal(whole, homes.get(session), `session ${session} moved`);
      homes.set(session, whole);
      if (round === 2) continue;
      const stream = await openai.chat.completions.create({ model: 'gpt', messages: hi, prompt_cache_key: session, stream: true });
      let text = '', finish = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      const streamed = served();
      assert.equal(text, 'hello from ' + upstreamOf(streamed));
      assert.equal(finish, 'stop');
      assert.equal(streamed, whole, `session ${session}: whole from ${whole}, streamed from ${streamed}`);
    }
  }
  assert.equal(new Set(homes.values()).size, 2, `both members should be home to some sessions: ${[...homes]}`);
});
