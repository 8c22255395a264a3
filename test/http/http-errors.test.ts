// The errors Fastify itself answers, before any route handler runs, over real HTTP on loopback:
// each has the service's body `{"detail": {"message", "reason", "fix"}}` (never Fastify's own
// `{"error", "code", "message", "statusCode"}`), and a known path asked with a method it does not
// have answers 405 with `Allow`, also when CORS adds its catch-all preflight route. The OpenAPI
// reference lists those statuses for every route.

import t from 'tap';
import { request as httpRequest } from 'node:http';
import { start } from '../support/server.ts';

const running = await start();
t.teardown(() => running.close());
await running.app.listen({ port: 0, host: '127.0.0.1' });
const port = (running.app.server.address() as { port: number }).port;

/** One raw request (any method, any path, any body), so nothing is normalised on the way. */
function send(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

function contractBody(t: Test, what: string, body: string, reason: string): void {
  const parsed = JSON.parse(body);
  t.same(Object.keys(parsed), ['detail'], `${what}: the contract's body, not Fastify's`);
  t.equal(parsed.detail.reason, reason, `${what}: reason ${reason}`);
  t.ok(
    typeof parsed.detail.message === 'string' && parsed.detail.message.length > 0 && typeof parsed.detail.fix === 'string' && parsed.detail.fix.length > 0,
    `${what}: says what is wrong and how to fix it`,
  );
  t.notMatch(body, /statusCode|FST_ERR| {4}at /, `${what}: no Fastify code or stack`);
}

const json = { 'content-type': 'application/json' };
const score = JSON.stringify({ amount: 10, customer_id: 'C1', merchant_id: 'M1' });

t.test('Fastify-level errors have the contract body', async (t) => {
  const cases: [string, Promise<Awaited<ReturnType<typeof send>>>, number, string][] = [
    ['a path parameter over the router limit', send('GET', `/api/jobs/${'x'.repeat(1200)}`), 414, 'uri_too_long'],
    ['an id over its declared length', send('GET', `/api/jobs/${'x'.repeat(300)}`), 422, 'validation_failed'],
    ['a malformed percent-encoding', send('GET', '/api/jobs/%E0%A4%A'), 400, 'bad_request'],
    [
      'a body over the limit',
      send('POST', '/api/risk/score', JSON.stringify({ amount: 1, customer_id: 'x'.repeat(2 << 20), merchant_id: 'M' }), json),
      413,
      'payload_too_large',
    ],
    [
      'another content type',
      send('POST', '/api/risk/score', 'amount=1', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    ],
    ['malformed JSON', send('POST', '/api/risk/score', '{"amount": 1,', json), 400, 'bad_request'],
    ['an unknown path', send('GET', '/api/nothing-here'), 404, 'not_found'],
  ];
  for (const [what, pending, status, reason] of cases) {
    const r = await pending;
    t.equal(r.status, status, `${what}: ${status}`);
    contractBody(t, what, r.body, reason);
  }
  t.equal((await send('POST', '/api/risk/score', score, json)).status, 200, 'and the same route answers a good request');
});

t.test('415 names the content types the route takes', async (t) => {
  const form = await send('POST', '/api/risk/score', 'amount=1', { 'content-type': 'application/x-www-form-urlencoded' });
  t.equal(JSON.parse(form.body).detail.fix, 'Send the body with Content-Type: application/json.', 'a JSON endpoint: JSON');
  const bytes = await send('POST', '/api/datasets/upload', 'amount,customer_id,merchant_id\n1,c,m\n', { 'content-type': 'application/octet-stream' });
  t.equal(bytes.status, 415);
  t.equal(JSON.parse(bytes.body).detail.fix, 'Send the body with Content-Type: text/csv or multipart/form-data.', 'the upload: a CSV or a form');
});

t.test('a known path with a method it does not have: 405 with Allow', async (t) => {
  for (const [method, path, allow] of [
    ['TRACE', '/api/risk/score', 'POST'],
    ['PATCH', '/api/jobs/abc', 'GET, HEAD'],
    ['DELETE', '/api/health', 'GET, HEAD'],
    ['QUERY', '/api/jobs/abc', 'GET, HEAD'],
    ['PUT', '/api/datasets/example', 'GET, HEAD'],
  ] as const) {
    const r = await send(method, path);
    t.equal(r.status, 405, `${method} ${path}: 405`);
    t.equal(r.headers.allow, allow, `${method} ${path}: Allow ${allow} (the most specific route's methods)`);
    contractBody(t, `${method} ${path}`, r.body, 'method_not_allowed');
  }
  t.equal((await send('TRACE', '/api/not-a-route')).status, 404, 'an unknown path stays 404 whatever the method');
});

t.test('the reference lists the statuses the framework answers', async (t) => {
  const doc = JSON.parse((await send('GET', '/api/docs/json')).body);
  const score = doc.paths['/api/risk/score'].post.responses;
  for (const s of ['400', '413', '415', '422']) t.ok(score[s], `POST /api/risk/score documents ${s}`);
  const job = doc.paths['/api/jobs/{id}'].get.responses;
  for (const s of ['414', '422']) t.ok(job[s], `GET /api/jobs/{id} documents ${s}`);
  t.notOk(job['415'], 'a GET documents no body errors');
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      // Training through the API is specified to answer 501 after its checks, always.
      const success = path === '/api/training/jobs' ? ['501'] : Object.keys(op.responses).filter((s) => s.startsWith('2'));
      if (!success.some((s) => op.responses[s])) t.fail(`${method.toUpperCase()} ${path} documents no success`);
      if (!op.responses['500']) t.fail(`${method.toUpperCase()} ${path} documents no 500`);
      if (path.includes('{') && !(op.responses['400'] && op.responses['414']))
        t.fail(`${method.toUpperCase()} ${path} documents no 400 and 414 for its path parameters`);
      if (method === 'delete' && !(op.responses['413'] && op.responses['415'])) t.fail(`${method.toUpperCase()} ${path} documents no 413 and 415 for a body`);
      // A session used on the dashboard surface with an unsafe method needs its CSRF token (403).
      const csrf = method !== 'get' && path.startsWith('/api/') && !path.startsWith('/api/v1/');
      if (csrf && !op.responses['403']) t.fail(`${method.toUpperCase()} ${path} documents no 403 (csrf_failed)`);
    }
  }
  const download = doc.paths['/api/jobs/{id}/download'].get.responses['200'];
  t.ok(download?.content?.['text/csv'], 'the download documents its CSV');
  t.ok(download?.headers?.['content-disposition'], 'and the file name it is given');
});

t.test('with CORS configured, its catch-all preflight route makes no unknown path known', async (t) => {
  const cors = await start({ overrides: { CORS_ORIGINS: 'https://app.example.com' } });
  t.teardown(() => cors.close());
  const trace = await cors.app.inject({ method: 'TRACE', url: '/api/not-a-route' });
  t.equal(trace.statusCode, 404, 'an unknown path stays 404');
  const preflight = await cors.app.inject({
    method: 'OPTIONS',
    url: '/api/risk/score',
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
  });
  t.equal(preflight.statusCode, 204, 'a preflight is still answered');
  const wrong = await cors.app.inject({ method: 'PUT', url: '/api/health' });
  t.equal(wrong.statusCode, 405);
  t.equal(wrong.headers.allow, 'GET, HEAD', 'Allow lists the route, not the catch-all');
});
