// The official openai Node client against the loopctl gateway. Run by
// gateway/node_test.go, which starts the gateway in front of a scripted
// upstream and sets LOOPCTL_GATEWAY_URL (the /v1 base URL) and
// LOOPCTL_GATEWAY_KEY. Models (see node_test.go):
//   smart   primary fails (503), the chain answers "from b"
//   doomed  every model fails (500)
//   limited rate-limited everywhere (429)
//   bad     the upstream rejects the request (400 context_length_exceeded)
//   cut     the stream breaks after its first content chunk
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.LOOPCTL_GATEWAY_URL;
const apiKey = process.env.LOOPCTL_GATEWAY_KEY;
assert.ok(baseURL, 'LOOPCTL_GATEWAY_URL is not set: run through go test ./gateway -run Node');

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const messages = [{ role: 'user', content: 'hi' }];

test('non-streaming: served by the chain', async () => {
  const { data, response } = await client.chat.completions.create({ model: 'smart', messages }).withResponse();
  assert.equal(data.choices[0].message.content, 'from b');
  assert.equal(response.headers.get('x-loopctl-model'), 'up/b');
});

test('streaming: served by the chain, chunk by chunk', async () => {
  const stream = await client.chat.completions.create({ model: 'smart', messages, stream: true });
  const parts = [];
  for await (const chunk of stream) {
    const c = chunk.choices[0]?.delta?.content;
    if (c) parts.push(c);
  }
  assert.deepEqual(parts, ['from ', 'b']);
});

test('models list', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['smart', 'doomed', 'limited', 'bad', 'cut']);
});

test('every model fails: 502 upstream_error, then 503 fallback_exhausted with Retry-After', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'doomed', messages }), (err) => {
    assert.ok(err instanceof OpenAI.InternalServerError, `got ${err?.constructor?.name}`);
    assert.equal(err.status, 502);
    assert.equal(err.type, 'upstream_error');
    return true;
  });
  await assert.rejects(client.chat.completions.create({ model: 'doomed', messages }), (err) => {
    assert.ok(err instanceof OpenAI.InternalServerError, `got ${err?.constructor?.name}`);
    assert.equal(err.status, 503);
    assert.equal(err.code, 'fallback_exhausted');
    const after = Number(err.headers.get('retry-after'));
    assert.ok(after >= 1 && after <= 60, `Retry-After ${after}`);
    return true;
  });
});

test('the same when streaming: the error comes before any chunk', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'doomed', messages, stream: true }), (err) => {
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 503);
    assert.ok(err.headers.get('retry-after'));
    return true;
  });
});

test('rate-limited everywhere: RateLimitError with Retry-After', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'limited', messages }), (err) => {
    assert.ok(err instanceof OpenAI.RateLimitError, `got ${err?.constructor?.name}`);
    assert.equal(err.status, 429);
    assert.equal(err.headers.get('retry-after'), '1');
    return true;
  });
});

test('a bad request passes through: BadRequestError with the upstream code', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'bad', messages }), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, `got ${err?.constructor?.name}`);
    assert.equal(err.code, 'context_length_exceeded');
    return true;
  });
});

test('unknown model: NotFoundError', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'nope', messages }), OpenAI.NotFoundError);
});

test('wrong key: AuthenticationError', async () => {
  const other = new OpenAI({ baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
  await assert.rejects(other.chat.completions.create({ model: 'smart', messages }), OpenAI.AuthenticationError);
});

test('a stream broken after content: the chunks so far, then an APIError', async () => {
  const stream = await client.chat.completions.create({ model: 'cut', messages, stream: true });
  const parts = [];
  await assert.rejects(async () => {
    for await (const chunk of stream) {
      const c = chunk.choices[0]?.delta?.content;
      if (c) parts.push(c);
    }
  }, OpenAI.APIError);
  assert.deepEqual(parts, ['first ']);
});
