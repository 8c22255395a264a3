// A history built on its own thread (src/live/history-thread.ts): what it builds comes back whole,
// a page the history refuses fails the load with the history's own reason instead of hanging it,
// and so does a reading thread (PostgreSQL) that cannot read the rows. (That a thread's history
// equals one built on the event loop, byte for byte, from a database's rows, its reading thread's
// included, is test/live/history-snapshots.test.ts's.)

import t from 'tap';
import { eachBackend } from '../support/backends.ts';
import { HistoryThread } from '../../src/live/history-thread.ts';
import type { PackedColumn, TransactionColumns } from '../../src/domain/history/records.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 20);

function pack(values: string[]): PackedColumn {
  const bytes = values.map((v) => Buffer.from(v, 'utf8'));
  const ends = new Int32Array(values.length);
  let end = 0;
  bytes.forEach((b, i) => {
    end += b.length;
    ends[i] = end;
  });
  return { bytes: Buffer.concat(bytes), ends };
}

/** `n` payments from `first` on, a minute apart from `from`. */
function page(first: number, n: number, from: number): TransactionColumns {
  const ids = Array.from({ length: n }, (_, i) => `t-${first + i}`);
  return {
    count: n,
    times: Float64Array.from(ids, (_, i) => from + i * 60_000),
    amounts: Float64Array.from(ids, (_, i) => 10 + i),
    labels: new Int8Array(n).fill(-1),
    knownAt: new Float64Array(n).fill(Number.NaN),
    ids: pack(ids),
    customers: pack(ids.map((_, i) => `c${i % 7}`)),
    merchants: pack(ids.map((_, i) => `m${i % 3}`)),
    locations: pack(ids.map(() => 'Lisbon')),
    paymentTypes: pack(ids.map(() => 'card')),
  };
}

t.test('pages handed over come back as one history', async (t) => {
  const thread = new HistoryThread(7 * DAY);
  thread.start(NOW - 31 * DAY, 300);
  // More pages than wait for the thread at once: the sender waits for room, nothing is lost.
  for (let p = 0; p < 10; p++) await thread.transactions(page(p * 30, 30, NOW - 10 * DAY + p * 30 * 60_000));
  const history = await thread.finish([]);
  t.equal(history.size, 300, 'every transaction held');
  t.ok(history.transactions.indexed, 'found by id');
  t.ok(history.transactions.find('t-0') >= 0 && history.transactions.find('t-299') >= 0, 'the first and the last');
  t.equal(history.labelDelay, 7 * DAY, 'with its label delay');
});

t.test('a page the history refuses fails the load with its reason', async (t) => {
  const thread = new HistoryThread(7 * DAY);
  thread.start(NOW - 31 * DAY, 20);
  await thread.transactions(page(0, 10, NOW - DAY));
  // Older than the page before it: a history is built in time order.
  await thread.transactions(page(10, 10, NOW - 2 * DAY)).catch(() => {});
  await t.rejects(thread.finish([]), /time order/, "the history's own reason");
});

eachBackend(
  'a reading thread fails the load with its reason, and reads an empty organization as an empty history',
  async (t, fx) => {
    const db = await fx.open();
    await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const shared = await tx.shareSnapshot!();
      // A snapshot that was never exported: the reader's connection refuses to start in it.
      const broken = new HistoryThread(7 * DAY, true);
      broken.start(NOW - 31 * DAY, 10);
      await t.rejects(broken.rows({ ...shared, id: `${shared.id}0` }, 'org_a', NOW - 31 * DAY), /shared database snapshot failed/, 'the reason, not a hang');
      broken.close();
      // The real one: an organization without rows reads as an empty history, whole.
      // Its reading thread started only when asked to read.
      const empty = new HistoryThread(7 * DAY);
      empty.start(NOW - 31 * DAY, 0);
      await empty.rows(shared, 'org_none', NOW - 31 * DAY);
      const history = await empty.finish();
      t.equal(history.size, 0, 'an empty history');
      t.ok(history.transactions.indexed, 'found by id');
    });
  },
  { kind: 'postgres', because: 'only PostgreSQL shares a snapshot with another thread' },
);
