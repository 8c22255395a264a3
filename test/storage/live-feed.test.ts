// The live feed's order on both back ends: changes come in (xid, seq) order, a page at a time,
// each exactly once; and on PostgreSQL, where writers run side by side without a lock, a write
// still in flight holds back only itself: a later transaction's committed rows are read at once,
// the earlier one's when it commits (however many pages it takes), each exactly once, and a writer
// that rolls back is forgotten. A load's snapshot tells which writes it saw.

import type { Db } from '../../src/storage/db.ts';
import { before, feedSnapshot, feedStart, readFeed, seenBy, type FeedChange, type FeedCursor } from '../../src/storage/live-feed.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { recordGroup } from '../../src/storage/recorded-group.ts';
import { eachBackend } from '../support/backends.ts';

async function oneOrganization(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
}

const row = (id: string, i: number): NewTransaction => ({
  transaction_id: id,
  time: 1_700_000_000_000 + i * 60_000,
  amount: 10 + i,
  customer_id: `c-${i % 3}`,
  merchant_id: 'm-1',
  location: 'Lisbon',
  payment_type: 'wallet',
  source: 'scored',
});

/** Everything readable after `from`, `limit` at a time, as the tail reads it. */
async function readAll(db: Db, from: FeedCursor, limit: number, applied: readonly number[] = []): Promise<{ changes: FeedChange[]; next: FeedCursor }> {
  const changes: FeedChange[] = [];
  let at = from;
  for (;;) {
    const page = await readFeed(db, at, limit, applied);
    changes.push(...page.changes);
    if (before(page.next.position, at.position)) throw new Error('the position went back');
    at = page.next;
    if (!page.more) return { changes, next: at };
  }
}

const startOf = async (db: Db): Promise<FeedCursor> => ({ position: await feedStart(db), pending: new Map() });

const names = (changes: FeedChange[]) =>
  changes.map((c) =>
    c.kind === 'outcome'
      ? `outcome:${c.transaction_id}`
      : c.kind === 'transaction'
        ? c.transaction_id
        : c.kind === 'rule'
          ? `rule:${c.rule.name}`
          : c.kind === 'field'
            ? `field:${c.field.name}`
            : c.kind === 'inbox'
              ? `inbox:${c.inbox.name}`
              : c.kind === 'list_item'
                ? `item:${c.stay.value}`
                : `erasure:${c.organization_id}`,
  );

eachBackend('the feed reads every change once, in (xid, seq) order, a page at a time', async (t, fx) => {
  const db = await fx.open();
  await oneOrganization(db);
  const start = await startOf(db);
  await recordGroup(db, [
    { organizationId: 'org_a', row: row('t-2', 2) },
    { organizationId: 'org_a', row: row('t-1', 1) },
  ]);
  await organizationData(db, 'org_a').transactions.insert([row('t-3', 3), row('t-4', 4)]);
  const { xid } = await organizationData(db, 'org_a').outcomes.apply([
    { transaction_id: 't-1', label: 1, source: 'review', reported_at_ms: 1_800_000_000_000, reported_by: 'u1' },
  ]);
  t.type(xid, 'number', 'an outcome that changed something names its database transaction');

  const whole = await readAll(db, start, 256);
  t.same(names(whole.changes), ['t-1', 't-2', 't-3', 't-4', 'outcome:t-1'], 'each change once: a group in key order, then the import, then the outcome');
  for (let i = 1; i < whole.changes.length; i++) t.ok(before(whole.changes[i - 1]!, whole.changes[i]!), 'positions increase');
  t.ok(whole.next.position.xid > xid!, 'the position has passed the last writer');
  // PostgreSQL's transaction ids are the server's: other databases' running writers (other tests')
  // may be pending there; PGlite has none.
  if (fx.kind === 'pglite') t.equal(whole.next.pending.size, 0, 'no writer is running: nothing is pending');
  else t.notOk(whole.next.pending.has(xid!), 'no writer of this test is pending');
  t.same(names((await readAll(db, start, 2)).changes), names(whole.changes), 'pages of two read the same');
  t.same((await readFeed(db, whole.next, 256)).changes, [], 'nothing after the end');
});

eachBackend(
  'a write in flight holds back only itself: read once when it commits, forgotten when it rolls back',
  async (t, fx) => {
    const db = await fx.open();
    await oneOrganization(db);
    const start = await startOf(db);
    // A writer that has its transaction id and rows, and has not ended (its customer, merchant and
    // channel are its own, so the other writers have no totals to wait for).
    const holdOpen = (ids: string[], commit: boolean, entity: string) => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => (wrote = resolve));
      let xid = 0;
      const ended = db
        .transaction(async (tx) => {
          for (const id of ids) {
            await tx.query(
              `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
               VALUES ('org_a', $1, 1, 1, $2, $2, $2, 'card', 'scored')`,
              [id, entity],
            );
          }
          xid = Number((await tx.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid'))[0]!.xid);
          wrote();
          await held;
          if (!commit) throw new Error('rolled back on purpose');
        })
        .catch((e: Error) => {
          if (commit) throw e;
        });
      return {
        written,
        xid: () => xid,
        end: async () => {
          release();
          return ended;
        },
      };
    };
    const slow = holdOpen(['slow-1', 'slow-2', 'slow-3', 'slow-4', 'slow-5'], true, 'slow');
    await slow.written;
    const doomed = holdOpen(['doomed'], false, 'doomed');
    await doomed.written;
    // A later writer commits meanwhile.
    await recordGroup(db, [{ organizationId: 'org_a', row: row('fast', 1) }]);
    const meanwhile = await readAll(db, start, 2);
    t.same(names(meanwhile.changes), ['fast'], "the later writer's committed row is read at once; the running writers' rows are not");
    // (PostgreSQL's transaction ids are the server's: other databases' running writers, such as
    // other tests', may be pending too.)
    t.ok(meanwhile.next.pending.has(slow.xid()) && meanwhile.next.pending.has(doomed.xid()), 'both running writers are pending');
    t.same(names((await readAll(db, meanwhile.next, 2)).changes), [], 'nothing is read again while they run');

    // A load's snapshot taken now saw the later writer, not the earlier one.
    const snapshot = await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return feedSnapshot(tx);
    });
    await slow.end();
    await doomed.end();
    await recordGroup(db, [{ organizationId: 'org_a', row: row('later', 2) }]);
    const after = await readAll(db, meanwhile.next, 256);
    t.same(
      names(after.changes),
      ['slow-1', 'slow-2', 'slow-3', 'slow-4', 'slow-5', 'later'],
      "once it commits, the earlier writer's rows arrive before the newer; the rolled-back writer's never",
    );
    const paged = await readAll(db, meanwhile.next, 2);
    t.same(
      names(paged.changes).filter((n) => n.startsWith('slow')),
      ['slow-1', 'slow-2', 'slow-3', 'slow-4', 'slow-5'],
      'in pages of two, every row of the earlier writer once, in order',
    );
    t.same(
      names(paged.changes).filter((n) => !n.startsWith('slow')),
      ['later'],
      'and the newer once',
    );
    const stillPending = (p: ReadonlyMap<number, number>) => [slow.xid(), doomed.xid()].filter((x) => p.has(x));
    t.same(stillPending(paged.next.pending), [], 'read in pages, both ended too');
    t.same(stillPending(after.next.pending), [], 'both ended: neither is pending');
    t.same((await readAll(db, after.next, 2)).changes, [], 'each change once');
    const everything = await readAll(db, start, 256);
    t.same(
      names(everything.changes).sort(),
      ['fast', 'later', 'slow-1', 'slow-2', 'slow-3', 'slow-4', 'slow-5'],
      'a reader from the start reads the same changes',
    );
    const [slowRow] = after.changes;
    t.notOk(seenBy(snapshot, slowRow!.xid), 'the snapshot did not see the write in flight');
    t.ok(seenBy(snapshot, meanwhile.changes[0]!.xid), 'the snapshot saw the committed one');
  },
  { kind: 'postgres', because: 'PGlite is one connection: its writers never overlap' },
);

eachBackend("a reader's own writes, named as applied, are left out: the rest is read, and the position passes them", async (t, fx) => {
  const db = await fx.open();
  await oneOrganization(db);
  const start = await startOf(db);
  const xidOf = (stored: Map<string, Map<string, { xid: number }>>) => [...stored.get('org_a')!.values()][0]!.xid;
  const mine = xidOf(
    await recordGroup(db, [
      { organizationId: 'org_a', row: row('mine-1', 1) },
      { organizationId: 'org_a', row: row('mine-2', 2) },
    ]),
  );
  const theirs = xidOf(await recordGroup(db, [{ organizationId: 'org_a', row: row('theirs', 3) }]));
  await organizationData(db, 'org_a').outcomes.apply([
    { transaction_id: 'mine-1', label: 1, source: 'review', reported_at_ms: 1_800_000_000_000, reported_by: 'u1' },
  ]);
  t.not(mine, theirs, 'two database transactions');
  for (const limit of [1, 256]) {
    const read = await readAll(db, start, limit, [mine]);
    t.same(names(read.changes), ['theirs', 'outcome:mine-1'], `pages of ${limit}: the other writer's row and the outcome; not the applied rows`);
    t.ok(read.next.position.xid > mine && read.next.position.xid > theirs, 'the position has passed both writers');
    t.same((await readFeed(db, read.next, 256)).changes, [], 'the applied rows are not read later either');
  }
  t.same(names((await readAll(db, start, 256)).changes), ['mine-1', 'mine-2', 'theirs', 'outcome:mine-1'], 'named by nobody, every row is read');
  if (fx.kind !== 'postgres') return;
  // A write of the reader's own still running when a read passes it: pending, then left out once
  // it has committed and is named.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let wrote!: (xid: number) => void;
  const written = new Promise<number>((resolve) => (wrote = resolve));
  const ended = db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
       VALUES ('org_a', 'mine-late', 1, 1, 'late', 'late', 'late', 'card', 'scored')`,
    );
    wrote(Number((await tx.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid'))[0]!.xid));
    await held;
  });
  const late = await written;
  // A later writer commits meanwhile: the read's snapshot sees the running one below its end.
  await recordGroup(db, [{ organizationId: 'org_a', row: row('theirs-2', 4) }]);
  const meanwhile = await readAll(db, start, 256, [mine]);
  t.same(names(meanwhile.changes), ['theirs', 'outcome:mine-1', 'theirs-2'], 'read meanwhile: the committed rows not named, in feed order');
  const from = meanwhile.next;
  t.ok(from.pending.has(late), 'the running write is pending');
  release();
  await ended;
  await recordGroup(db, [{ organizationId: 'org_a', row: row('theirs-3', 5) }]);
  t.same(names((await readAll(db, from, 256)).changes), ['mine-late', 'theirs-3'], 'not named, the pending write is read when it has committed');
  const after = await readAll(db, from, 256, [mine, late]);
  t.same(names(after.changes), ['theirs-3'], 'named, it is not; the later write is');
  t.notOk(after.next.pending.has(late), 'and it is no longer pending');
});
