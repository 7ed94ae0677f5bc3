// Shared by the crosswire tests (run by gateway/node_crosswire_test.go,
// which sets LOOPCTL_GATEWAY, the gateway's root URL, and
// LOOPCTL_GATEWAY_KEY): the gateway's address and a fetch that records
// the headers of every answer, for the gateway's side of each case.
import assert from 'node:assert/strict';

export const root = process.env.LOOPCTL_GATEWAY;
export const apiKey = process.env.LOOPCTL_GATEWAY_KEY;
assert.ok(root, 'LOOPCTL_GATEWAY is not set: run through go test ./gateway -run TestNodeCrossWire');

// recorder returns a fetch to give a client, and the answers it saw:
// {url, status, model (x-loopctl-model), translated (x-loopctl-translated)}.
export function recorder() {
  const seen = [];
  const recordingFetch = async (url, init) => {
    const res = await fetch(url, init);
    seen.push({
      url: String(url),
      status: res.status,
      model: res.headers.get('x-loopctl-model'),
      translated: res.headers.get('x-loopctl-translated'),
    });
    return res;
  };
  return { fetch: recordingFetch, seen, last: () => seen[seen.length - 1] };
}

// served asserts the last answer rec saw was served by the entry model
// after translating wire.
export function served(rec, model, wire) {
  const last = rec.last();
  assert.ok(last, 'no answer recorded');
  assert.equal(last.status, 200, JSON.stringify(last));
  assert.equal(last.model, model, JSON.stringify(last));
  assert.equal(last.translated, wire, JSON.stringify(last));
}
