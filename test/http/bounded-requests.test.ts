// Bounded requests over real HTTP: a request whose headers or body stop arriving is answered 408
// `request_timeout` in the service's error shape within REQUEST_TIMEOUT_SECONDS and its connection
// closed, while other clients keep being served; an upload cut off that way leaves no file and no
// dataset behind. A client that closes its side part way is answered at once (400).

import t from 'tap';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { start } from '../support/server.ts';

const TIMEOUT_S = 2;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const s = await start({ overrides: { REQUEST_TIMEOUT_SECONDS: TIMEOUT_S } });
t.teardown(() => s.close());
await s.app.listen({ port: 0, host: '127.0.0.1' });
const port = (s.app.server.address() as { port: number }).port;
const base = `http://127.0.0.1:${port}`;

/** A raw connection: what it received and when it closed (ms after `opened`). */
function rawClient(t: Test): { socket: Socket; received: () => string; closed: Promise<number>; opened: number } {
  const socket = connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const opened = performance.now();
  let received = '';
  socket.on('data', (c) => (received += c));
  socket.on('error', () => {});
  const closed = new Promise<number>((r) => socket.on('close', () => r(performance.now() - opened)));
  return { socket, received: () => received, closed, opened };
}

function uploads(): string[] {
  try {
    return readdirSync(join(s.dataDir, 'uploads'));
  } catch {
    return [];
  }
}

/** Health checks every 100 ms until `until` settles: how many answered 200, and how many did not. */
async function keepAsking(until: Promise<unknown>): Promise<{ ok: number; failed: number }> {
  let done = false;
  void until.then(() => (done = true));
  const tally = { ok: 0, failed: 0 };
  while (!done) {
    const res = await fetch(`${base}/api/health`).catch(() => undefined);
    if (res?.status === 200) tally.ok++;
    else tally.failed++;
    await res?.text();
    await delay(100);
  }
  return tally;
}

t.test('an upload whose body stops part way: 408 in time, the connection closed, nothing stored', async (t) => {
  const before = uploads().length;
  const c = rawClient(t);
  const head = `amount,customer_id,merchant_id\n${'12.5,C1,M1\n'.repeat(200)}`;
  c.socket.write(`POST /api/datasets/upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: 1000000\r\n\r\n${head}`);
  await delay(300);
  t.equal(uploads().length, before + 1, 'the upload was being written while its body arrived');
  const others = await keepAsking(c.closed);
  const closedAfter = await c.closed;
  t.match(c.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/, '408');
  t.match(c.received(), /\r\nConnection: close\r\n/i, 'Connection: close');
  const body = JSON.parse(c.received().split('\r\n\r\n')[1]!);
  t.equal(body.detail.reason, 'request_timeout');
  t.match(body.detail.fix, /again/);
  t.ok(closedAfter >= TIMEOUT_S * 1000 - 100 && closedAfter < TIMEOUT_S * 1000 + 2500, `closed after ${Math.round(closedAfter)} ms (limit ${TIMEOUT_S} s)`);
  t.ok(others.ok >= 10 && others.failed === 0, `other requests kept being served meanwhile (${others.ok} answered, ${others.failed} not)`);
  await delay(300);
  t.equal(uploads().length, before, 'the partial upload was removed');
  const [{ n }] = await s.service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM datasets');
  t.equal(n, 0, 'no dataset was recorded');
});

t.test('headers that never end: 408 in time', async (t) => {
  const c = rawClient(t);
  c.socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
  const closedAfter = await c.closed;
  t.match(c.received(), /^HTTP\/1\.1 408 /, '408');
  t.ok(closedAfter < TIMEOUT_S * 1000 + 2500, `closed after ${Math.round(closedAfter)} ms`);
});

t.test('a client that closes its side part way is answered at once', async (t) => {
  const c = rawClient(t);
  c.socket.end('POST /api/datasets/upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: 1000\r\n\r\namount,customer_id\n');
  const closedAfter = await c.closed;
  t.ok(closedAfter < 1000, `closed after ${Math.round(closedAfter)} ms`);
  await delay(300);
  t.same(uploads(), [], 'nothing kept');
});

t.test('a request that arrives in time is served normally, on a kept-alive connection too', async (t) => {
  const c = rawClient(t);
  c.socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
  await delay(TIMEOUT_S * 1000 + 1500);
  c.socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
  await delay(500);
  const answers = c.received().split(/(?=HTTP\/1\.1 \d{3})/);
  t.equal(answers.length, 2, 'two answers on one connection, the second after more than the request timeout of idleness');
  t.ok(
    answers.every((a) => a.startsWith('HTTP/1.1 200')),
    'both 200',
  );
});
