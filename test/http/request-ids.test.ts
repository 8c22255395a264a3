// Request ids over real HTTP on loopback: every response carries `Request-Id`, the caller's
// `X-Request-Id` when it is 1–128 visible ASCII characters, otherwise a generated `req_<uuid>`
// (too long, spaces, tabs, control characters, non-ASCII, empty, two headers); every error body
// carries the same id in `detail.request_id` (Fastify's own errors, validation, 404/405, 429, and
// what the HTTP parser refuses before there is a request); the access log's line has it; with
// CORS configured a browser may read it and send its own.

import t from 'tap';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { start } from '../support/server.ts';

const GENERATED = /^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const lines: string[] = [];
const running = await start({
  overrides: { SCORE_RATE_PER_MINUTE: 3 },
  logger: {
    level: 'info',
    stream: new Writable({
      write(chunk, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    }),
  },
});
t.teardown(() => running.close());
await running.app.listen({ port: 0, host: '127.0.0.1' });
const port = (running.app.server.address() as { port: number }).port;

/** One request written byte for byte (any header value, control characters included); the
 *  answer's status, headers (lower case) and body. Connection: close: the server closes once it has
 *  answered (ending our side first would be a request cut short). */
function raw(head: string, body = ''): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (c) => (text += c));
    socket.on('error', reject);
    socket.on('close', () => {
      const [top, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = top!.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of headerLines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(`${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n${body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : ''}\r\n${body}`, 'latin1');
  });
}

const get = (path: string, headers = '') => raw(`GET ${path} HTTP/1.1${headers ? `\r\n${headers}` : ''}`);

t.test('a well-formed X-Request-Id is the id; anything else is replaced', async (t) => {
  for (const id of ['trace-0af7651916cd43dd8448eb211c80319c', 'a', '!~:/=+._@#$%^&*()[]{}<>?|;\'"`,', 'x'.repeat(128)]) {
    const r = await get('/api/health', `X-Request-Id: ${id}`);
    t.equal(r.status, 200);
    t.equal(r.headers['request-id'], id, `echoed: ${id.slice(0, 40)}`);
  }
  const seen = new Set<string>();
  for (const [what, header] of [
    ['none', ''],
    ['empty', 'X-Request-Id: '],
    ['129 characters', `X-Request-Id: ${'x'.repeat(129)}`],
    ['a space', 'X-Request-Id: abc def'],
    ['a tab', 'X-Request-Id: abc\tdef'],
    ['non-ASCII', 'X-Request-Id: caf\xc3\xa9'],
    ['two headers', 'X-Request-Id: one\r\nX-Request-Id: two'],
  ] as const) {
    const r = await get('/api/health', header);
    t.equal(r.status, 200, `${what}: answered`);
    t.match(r.headers['request-id'], GENERATED, `${what}: a generated id`);
    seen.add(r.headers['request-id']!);
  }
  t.equal(seen.size, 7, 'each generated id is new');
  // A control character (DEL too): Node's parser refuses the header (400), and that answer has an
  // id too, never the one sent.
  for (const id of ['abc\x01def', 'abc\x7fdef']) {
    const control = await get('/api/health', `X-Request-Id: ${id}`);
    t.equal(control.status, 400);
    t.match(control.headers['request-id'], GENERATED, `${JSON.stringify(id)}: a generated id`);
  }
});

t.test('every error body carries the id, the one in the header', async (t) => {
  const json = 'Content-Type: application/json';
  const cases: [string, Promise<Awaited<ReturnType<typeof raw>>>, number, string][] = [
    ['an unknown path', get('/api/nothing-here', 'X-Request-Id: id-404'), 404, 'not_found'],
    ['a method the path lacks', raw('DELETE /api/health HTTP/1.1\r\nX-Request-Id: id-405'), 405, 'method_not_allowed'],
    ['a path parameter over the router limit', get(`/api/jobs/${'x'.repeat(1200)}`, 'X-Request-Id: id-414'), 414, 'uri_too_long'],
    ['a malformed percent-encoding', get('/api/jobs/%E0%A4%A', 'X-Request-Id: id-400-url'), 400, 'bad_request'],
    ['a validation failure', raw(`POST /api/risk/score HTTP/1.1\r\n${json}\r\nX-Request-Id: id-422`, '{"amount":"lots"}'), 422, 'validation_failed'],
    ['malformed JSON', raw(`POST /api/risk/score HTTP/1.1\r\n${json}\r\nX-Request-Id: id-400`, '{"amount":'), 400, 'bad_request'],
    ['another media type', raw('POST /api/risk/score HTTP/1.1\r\nContent-Type: text/plain\r\nX-Request-Id: id-415', 'amount=1'), 415, 'unsupported_media_type'],
  ];
  for (const [what, pending, status, reason] of cases) {
    const r = await pending;
    t.equal(r.status, status, `${what}: ${status}`);
    const detail = JSON.parse(r.body).detail;
    t.equal(detail.reason, reason, `${what}: ${reason}`);
    t.equal(detail.request_id, r.headers['request-id'], `${what}: the body's id is the header's`);
    t.match(detail.request_id, /^id-/, `${what}: the caller's id`);
  }
});

t.test('the rate limit (429) carries it', async (t) => {
  const body = JSON.stringify({ amount: 10, customer_id: 'C1', merchant_id: 'M1', explain: false });
  let limited: Awaited<ReturnType<typeof raw>> | undefined;
  for (let k = 0; k < 5 && !limited; k++) {
    const r = await raw(`POST /api/risk/score HTTP/1.1\r\nContent-Type: application/json\r\nX-Request-Id: score-${k}`, body);
    t.equal(r.headers['request-id'], `score-${k}`, `request ${k}: its id (${r.status})`);
    if (r.status === 429) limited = r;
  }
  t.ok(limited, 'limited after 3 a minute');
  const detail = JSON.parse(limited!.body).detail;
  t.equal(detail.reason, 'rate_limited');
  t.equal(detail.request_id, limited!.headers['request-id']);
});

t.test('what the HTTP parser refuses has an id in its header and body', async (t) => {
  const r = await raw('NOT HTTP AT ALL');
  t.equal(r.status, 400);
  t.match(r.headers['request-id'], GENERATED);
  t.equal(JSON.parse(r.body).detail.request_id, r.headers['request-id']);
});

t.test("the access log's line has the id", async (t) => {
  await get('/api/no-such-route', 'X-Request-Id: find-me-in-the-log');
  const anonymous = await get('/api/no-such-route-either');
  const logged = lines
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(
    logged.find((l) => l.path === '/api/no-such-route'),
    { msg: 'request refused', status: 404, request_id: 'find-me-in-the-log' },
  );
  t.match(
    logged.find((l) => l.path === '/api/no-such-route-either'),
    { msg: 'request refused', status: 404, request_id: anonymous.headers['request-id'] },
  );
});

t.test('with CORS configured, a browser may read Request-Id and send X-Request-Id', async (t) => {
  const cors = await start({ overrides: { CORS_ORIGINS: 'https://app.example.com' } });
  t.teardown(() => cors.close());
  const res = await cors.app.inject({ url: '/api/health', headers: { origin: 'https://app.example.com', 'x-request-id': 'from-the-browser' } });
  t.equal(res.headers['request-id'], 'from-the-browser');
  t.match(String(res.headers['access-control-expose-headers']), /(^|, ?)request-id(,|$)/i, 'exposed to the page');
  const preflight = await cors.app.inject({
    method: 'OPTIONS',
    url: '/api/risk/score',
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-request-id' },
  });
  t.equal(preflight.statusCode, 204);
  t.match(String(preflight.headers['access-control-allow-headers']), /x-request-id/i, 'allowed on a request');
  t.ok(preflight.headers['request-id'], 'a preflight has an id too');
});
