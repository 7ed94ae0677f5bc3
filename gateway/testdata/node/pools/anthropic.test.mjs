// @anthropic-ai/sdk (Messages) through a pool of three Anthropic keys of
// one model (node_pools_test.go): pool/sonnet = an1, an2 and an3, where an3
// answers 500. Each session (metadata.user_id, as Claude Code sends it)
// sends whole and streamed requests; the healthy members answer
// "hello from <upstream>".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { root, apiKey, sessions, recorder, upstreamOf } from './shared.mjs';

const rec = recorder();
const anthropic = new Anthropic({ baseURL: root, apiKey, maxRetries: 0, fetch: rec.fetch });
const hi = [{ role: 'user', content: 'hi' }];

// servedHealthy asserts the last answer came from a healthy member and
// returns it.
function servedHealthy() {
  const last = rec.last();
  assert.equal(last.status, 200, JSON.stringify(last));
  assert.match(last.model ?? '', /^an[12]\/claude-sonnet-4-5$/, JSON.stringify(last));
  assert.equal(last.translated, null, JSON.stringify(last));
  return last.model;
}

test('every request of every session succeeds, each session on one healthy member', async () => {
  const homes = new Map();
  // each session: a whole answer and a streamed one, then (once every
  // session has had its first) a whole answer again
  for (const round of [1, 2]) {
    for (const session of sessions) {
      const metadata = { user_id: session };
      const msg = await anthropic.messages.create({ model: 'claude', max_tokens: 64, messages: hi, metadata });
      const whole = servedHealthy();
      assert.equal(msg.content[0].text, 'hello from ' + upstreamOf(whole));
      assert.equal(msg.stop_reason, 'end_turn');
      if (homes.has(session)) assert.equal(whole, homes.get(session), `session ${session} moved`);
      homes.set(session, whole);
      if (round === 2) continue;
      const stream = anthropic.messages.stream({ model: 'claude', max_tokens: 64, messages: hi, metadata });
      const deltas = [];
      stream.on('text', (t) => deltas.push(t));
      const final = await stream.finalMessage();
      const streamed = servedHealthy();
      assert.equal(deltas.join(''), 'hello from ' + upstreamOf(streamed));
      assert.equal(final.stop_reason, 'end_turn');
      assert.equal(streamed, whole, `session ${session}: whole from ${whole}, streamed from ${streamed}`);
    }
  }
  assert.equal(new Set(homes.values()).size, 2, `both healthy members should be home to some sessions: ${[...homes]}`);
});

test('the failing member is invisible: one answer counts its attempt, none names it', () => {
  const retried = rec.seen.filter((a) => a.attempts === 2);
  assert.equal(retried.length, 1, JSON.stringify(rec.seen));
  assert.ok(rec.seen.every((a) => a.attempts === 1 || a.attempts === 2), JSON.stringify(rec.seen));
  assert.ok(rec.seen.every((a) => !a.model?.startsWith('an3/')), JSON.stringify(rec.seen));
});
