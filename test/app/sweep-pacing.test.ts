// The retention sweep's pace, which keeps its deletes from holding the requests' commits: after each
// batch it waits as long as the database's log growth during the batch takes at the sweep's budget
// (here a log position the test counts itself, growing a fixed amount a batch, on each back end), and
// a stop during such a wait ends it at once. The log position it reads on PostgreSQL is the
// server's, growing with every write; the embedded database has none (it paces by `pauseMs` alone).

import { eachBackend } from '../support/backends.ts';
import { DataProtectionSweeper } from '../../src/app/data-protection/sweeper.ts';
import { logPosition, type Db } from '../../src/storage/db.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 6, 1);

/** An organization keeping the default 400 days, with `n` transactions of 500 days ago. */
async function expired(db: Db, n: number): Promise<void> {
  await db.query(`INSERT INTO users (id, email, name) VALUES ('u1', 'u1@example.com', 'U One')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
  await db.query(
    `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
     SELECT 'org_a', 'tx-' || x, $1::float8 + x, 10, 'c-' || (x % 7), 'm-1', 'FR', 'card_present', 'import' FROM generate_series(1, $2::int) AS x`,
    [NOW - 500 * DAY, n],
  );
}

eachBackend('the sweep waits after each batch as long as its log growth takes at the budget', async (t, fx) => {
  const db = await fx.open();
  await expired(db, 30);
  // 64 KB of log a batch (between the two readings around it) at 128 KB a second: half a second
  // after each of the three full batches.
  let position = 0;
  const sweeper = new DataProtectionSweeper({
    db,
    clock: () => NOW,
    log: () => {},
    everyMs: 3_600_000,
    sweepEveryMs: DAY,
    batch: 10,
    pauseMs: 1,
    logBytesPerSecond: 128 * 1024,
    logPosition: async () => (position += 64 * 1024),
  });
  const began = performance.now();
  await sweeper.run();
  const took = performance.now() - began;
  const [{ n }] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE organization_id = 'org_a'`)) as [{ n: number }];
  t.equal(n, 0, 'every expired transaction is deleted');
  t.ok(took >= 1_450, `three paced pauses of half a second each (${Math.round(took)} ms in all)`);
  await sweeper.stop();
});

eachBackend('a stop during a paced wait ends it at once', async (t, fx) => {
  const db = await fx.open();
  await expired(db, 30);
  let position = 0;
  let batches = 0;
  const sweeper = new DataProtectionSweeper({
    db,
    clock: () => NOW,
    log: () => {},
    everyMs: 3_600_000,
    sweepEveryMs: DAY,
    batch: 10,
    pauseMs: 1,
    // A megabyte a batch at a byte a second: the wait after the first batch would last for days.
    logBytesPerSecond: 1,
    logPosition: async () => {
      batches++;
      return (position += 1024 * 1024);
    },
  });
  const running = sweeper.run();
  for (const until = performance.now() + 10_000; batches < 2 && performance.now() < until; ) await new Promise((r) => setTimeout(r, 10));
  t.equal(batches, 2, 'the first batch is done and its wait begun');
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    sweeper.stop().then(() => 'stopped'),
    new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), 10_000))),
  ]);
  clearTimeout(timer);
  await running;
  t.equal(stopped, 'stopped', 'the stop does not wait for the pace');
  const [{ n }] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE organization_id = 'org_a'`)) as [{ n: number }];
  t.equal(n, 20, 'and nothing more is deleted after it');
});

eachBackend("the database's log position", async (t, fx) => {
  const db = await fx.open();
  const before = await logPosition(db);
  if (fx.kind === 'pglite') {
    t.equal(before, undefined, 'the embedded database has none to pace by');
    return;
  }
  t.type(before, 'number', 'PostgreSQL reports where its log stands');
  await expired(db, 200);
  const after = await logPosition(db);
  t.ok(after! > before!, `and it grows with a write (${after! - before!} bytes for 200 rows)`);
});
