// The process's requests at work (src/live/requests-at-work.ts) and a large history's read held
// back for them: a loading thread waits while a request is at work, until it is answered or for a
// bounded time; a request waiting for a load is not at work; over real HTTP every request is
// counted from its arrival until its answer ends, one cut short by its client included; and a
// reading thread (PostgreSQL) holds its read back while a request is at work and still ends.

import t from 'tap';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { holdWhileAtWork, RequestsAtWork, requestsAtWork } from '../../src/live/requests-at-work.ts';
import { HistoryThread } from '../../src/live/history-thread.ts';
import { eachBackend } from '../support/backends.ts';
import { start } from '../support/server.ts';

const DAY = 86_400_000;

/** A thread that holds on `buffer` for at most `maxMs`; resolves with how long it held, as it says
 *  and as its caller timed it from the start of the hold. */
function holdOnThread(buffer: SharedArrayBuffer, maxMs: number): { started: Promise<void>; held: Promise<{ said: number; timed: number }> } {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.module).then(({ holdWhileAtWork }) => {
      parentPort.postMessage('start');
      const said = holdWhileAtWork(workerData.buffer, workerData.maxMs);
      parentPort.postMessage(said);
    });`;
  const module = new URL('../../src/live/requests-at-work.ts', import.meta.url).href;
  const worker = new Worker(source, { eval: true, workerData: { buffer, maxMs, module } });
  let from = 0;
  let started!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  const held = new Promise<{ said: number; timed: number }>((resolve, reject) => {
    worker.on('message', (m: 'start' | number) => {
      if (m === 'start') {
        from = performance.now();
        return started();
      }
      resolve({ said: m, timed: performance.now() - from });
      void worker.terminate();
    });
    worker.on('error', reject);
  });
  return { started: startedP, held };
}

t.test('a loading thread waits while a request is at work, and no longer', async (t) => {
  const idle = new RequestsAtWork();
  t.equal(holdWhileAtWork(idle.buffer, 1_000), 0, 'no request at work: no wait');

  const busy = new RequestsAtWork();
  busy.enter();
  const answered = holdOnThread(busy.buffer, 5_000);
  await answered.started;
  await sleep(150);
  busy.leave();
  const a = await answered.held;
  t.ok(a.said >= 100 && a.timed >= 100, `held until the request was answered (${a.said.toFixed(0)} ms)`);
  t.ok(a.timed < 3_000, 'and woken by its answer, not by the bound');
  t.equal(busy.now, 0, 'none at work once answered');

  const never = new RequestsAtWork();
  never.enter();
  const bounded = await holdOnThread(never.buffer, 100).held;
  t.ok(bounded.said >= 95 && bounded.timed < 2_000, `a process never idle holds a load back for the bound only (${bounded.said.toFixed(0)} ms)`);
});

t.test('a request waiting for a load is not at work', async (t) => {
  const counts = new RequestsAtWork();
  counts.enter();
  let loaded!: (v: string) => void;
  const waiting = counts.parked(new Promise<string>((r) => (loaded = r)));
  t.equal(counts.now, 0, 'parked: not at work');
  t.equal(holdWhileAtWork(counts.buffer, 1_000), 0, 'the load it waits for is not held back by it');
  loaded('tenant');
  t.equal(await waiting, 'tenant', 'its wait resolves as the load does');
  t.equal(counts.now, 1, 'at work again once the load is done');
  const failing = counts.parked(Promise.reject(new Error('database down')));
  await t.rejects(failing, /database down/, 'a failed load reaches the request');
  t.equal(counts.now, 1, 'and it is at work again');
  counts.leave();
});

t.test('over HTTP, a request is at work from its arrival until its answer ends, however it ends', async (t) => {
  const running = await start();
  t.teardown(() => running.close());
  await running.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (running.app.server.address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}`;
  const before = requestsAtWork.now;

  for (const path of ['/api/health', '/api/no-such-route', '/api/health?x=1']) await (await fetch(`${base}${path}`)).text();
  const scored = await fetch(`${base}/api/risk/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
  await scored.text();
  t.equal(requestsAtWork.now, before, 'answered requests, a 404 and a refused body included, are no longer at work');

  // A request whose body never finishes: at work while it is read, not once its client is gone.
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write('POST /api/risk/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"amo');
  for (let i = 0; i < 100 && requestsAtWork.now === before; i++) await sleep(10);
  t.equal(requestsAtWork.now, before + 1, 'a request being received is at work');
  socket.destroy();
  for (let i = 0; i < 200 && requestsAtWork.now !== before; i++) await sleep(10);
  t.equal(requestsAtWork.now, before, 'its client gone, it is no longer at work');
});

eachBackend(
  'a reading thread holds its read back while a request is at work, and still reads everything',
  async (t, fx) => {
    const db = await fx.open();
    const floor = Date.UTC(2026, 10, 20) - 31 * DAY;
    await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const shared = await tx.shareSnapshot!();
      const quiet = new HistoryThread(7 * DAY, true);
      quiet.start(floor, 0);
      await quiet.rows(shared, 'org_none', floor);
      await quiet.finish();
      t.equal(quiet.heldMs, 0, 'no request at work: never held');

      requestsAtWork.enter();
      try {
        const busy = new HistoryThread(7 * DAY, true);
        busy.start(floor, 0);
        await busy.rows(shared, 'org_none', floor);
        const history = await busy.finish();
        t.equal(history.size, 0, 'read whole all the same');
        // Four COPYs of at least one piece each, every one held for the bound.
        t.ok(busy.heldMs >= 60, `held back while a request was at work (${busy.heldMs} ms)`);
      } finally {
        requestsAtWork.leave();
      }
    });
  },
  { kind: 'postgres', because: 'only PostgreSQL reads a history on a thread of its own' },
);
