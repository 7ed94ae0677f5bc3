// Shared by the pools tests (run by gateway/node_pools_test.go, which sets
// LOOPCTL_GATEWAY, LOOPCTL_GATEWAY_KEY and LOOPCTL_POOL_SESSIONS, the
// session keys to send, chosen so that every member is home to some): a
// fetch that records the gateway's headers of every answer.
import assert from 'node:assert/strict';

export { root, apiKey } from '../crosswire/shared.mjs';

export const sessions = (process.env.LOOPCTL_POOL_SESSIONS ?? '').split(',').filter(Boolean);
assert.ok(sessions.length > 0, 'LOOPCTL_POOL_SESSIONS is not set: run through go test ./gateway -run TestNodePools');

// recorder returns a fetch to give a client, and the answers it saw:
// {status, model (x-loopctl-model), translated, attempts (x-loopctl-attempts)}.
export function recorder() {
  const seen = [];
  const recordingFetch = async (url, init) => {
    const res = await fetch(url, init);
    seen.push({
      status: res.status,
      model: res.headers.get('x-loopctl-model'),
      translated: res.headers.get('x-loopctl-translated'),
      attempts: Number(res.headers.get('x-loopctl-attempts')),
    });
    return res;
  };
  return { fetch: recordingFetch, seen, last: () => seen[seen.length - 1] };
}

// upstreamOf is the upstream of a member target (upstream/model).
export const upstreamOf = (target) => target.split('/')[0];
