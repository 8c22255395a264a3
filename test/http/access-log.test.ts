// The request log as an operator reads it: a refused or failed request gets a line of its own
// (status, reason, route, path without its query string, nor a customer it names, milliseconds,
// request id); successful
// requests are summed per route and status into one line (how many, p50, p99, longest), written
// every few seconds and when the server closes; at `debug` every request has a line as well; no
// header (an API key, a cookie) is ever in it.

import t from 'tap';
import { Writable } from 'node:stream';
import { start } from '../support/server.ts';

async function logged(level: string, requests: (app: Awaited<ReturnType<typeof start>>['app']) => Promise<void>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  const s = await start({ logger: { level, stream } });
  await requests(s.app);
  await s.close();
  return lines
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

t.test('refusals one line each, successes summed, no headers', async (t) => {
  const lines = await logged('info', async (app) => {
    for (let k = 0; k < 5; k++) t.equal((await app.inject({ url: '/api/health', headers: { authorization: 'Bearer sk_test_secret-value' } })).statusCode, 200);
    t.equal((await app.inject({ url: '/api/no-such-route?token=hidden' })).statusCode, 404);
    t.equal((await app.inject({ method: 'POST', url: '/api/risk/score', payload: { amount: 'lots' } })).statusCode, 422);
    t.equal((await app.inject({ method: 'POST', url: '/api/v1/customers/cus_private_9/erasure', payload: {} })).statusCode, 401);
  });
  const text = JSON.stringify(lines);
  t.notOk(text.includes('sk_test_secret-value'), 'no header in the log');
  t.notOk(text.includes('hidden'), 'no query string in the log');
  t.notOk(text.includes('cus_private_9'), 'no customer named by a path in the log');
  const refused = lines.filter((l) => l.msg === 'request refused');
  t.same(
    refused.map((l) => [l.status, l.reason, l.path]),
    [
      [404, 'not_found', '/api/no-such-route'],
      [422, 'validation_failed', '/api/risk/score'],
      [401, 'invalid_api_key', '/api/v1/customers/:customer_id/erasure'],
    ],
    'each refusal with its status, reason and path',
  );
  t.match(refused[1], { method: 'POST', route: '/api/risk/score', ms: Number, request_id: String });
  const summaries = lines.filter((l) => l.msg === 'requests');
  t.match(
    summaries,
    [{ method: 'GET', route: '/api/health', status: 200, requests: 5, p50_ms: Number, p99_ms: Number, max_ms: Number }],
    'the five successes in one line',
  );
  t.equal(lines.filter((l) => l.msg === 'request').length, 0, 'no line per success at info');
});

t.test('at debug, every request has its own line too', async (t) => {
  const lines = await logged('debug', async (app) => {
    for (let k = 0; k < 3; k++) await app.inject({ url: '/api/health' });
  });
  t.equal(lines.filter((l) => l.msg === 'request' && l.route === '/api/health').length, 3);
});
