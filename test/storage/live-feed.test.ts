// The live feed's order on both back ends: changes come in (xid, seq) order, a page at a time,
// each exactly once; and on PostgreSQL, where writers run side by side without a lock, a reader
// never passes a write still in flight: a later transaction's committed rows wait until the earlier
// one ends, and then both arrive, the earlier first. A load's snapshot tells which writes it saw.

import type { Db } from '../../src/storage/db.ts';
import { before, feedSnapshot, feedStart, readFeed, seenBy, type FeedChange, type FeedPosition } from '../../src/storage/live-feed.ts';
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

/** Everything readable after `from`, `limit` at a time. */
async function readAll(db: Db, from: FeedPosition, limit: number): Promise<{ changes: FeedChange[]; through: FeedPosition }> {
  const changes: FeedChange[] = [];
  let at = from;
  for (;;) {
    const page = await readFeed(db, at, limit);
    changes.push(...page.changes);
    if (before(page.through, at)) throw new Error('the position went back');
    at = page.through;
    if (page.changes.length < limit) return { changes, through: at };
  }
}

const names = (changes: FeedChange[]) => changes.map((c) => `${c.kind === 'outcome' ? 'outcome:' : ''}${c.transaction_id}`);

eachBackend('the feed reads every change once, in (xid, seq) order, a page at a time', async (t, fx) => {
  const db = await fx.open();
  await oneOrganization(db);
  const start = await feedStart(db);
  await recordGroup(db, [
    { organizationId: 'org_a', row: row('t-2', 2) },
    { organizationId: 'org_a', row: row('t-1', 1) },
  ]);
  await organizationData(db, 'org_a').insert([row('t-3', 3), row('t-4', 4)]);
  const { xid } = await organizationData(db, 'org_a').applyOutcomes([{ transaction_id: 't-1', label: 1, source: 'review', reported_at_ms: 1_800_000_000_000, reported_by: 'u1' }]);
  t.type(xid, 'number', 'an outcome that changed something names its database transaction');

  const whole = await readAll(db, start, 256);
  t.same(names(whole.changes), ['t-1', 't-2', 't-3', 't-4', 'outcome:t-1'], 'each change once: a group in key order, then the import, then the outcome');
  for (let i = 1; i < whole.changes.length; i++) t.ok(before(whole.changes[i - 1]!, whole.changes[i]!), 'positions increase');
  t.ok(whole.through.xid > xid!, 'the position has passed the last writer');
  t.same(names((await readAll(db, start, 2)).changes), names(whole.changes), 'pages of two read the same');
  t.same((await readFeed(db, whole.through, 256)).changes, [], 'nothing after the end');
});

eachBackend(
  'a reader never passes a write still in flight',
  async (t, fx) => {
    const db = await fx.open();
    await oneOrganization(db);
    const start = await feedStart(db);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    // An earlier writer: it has its transaction id and its row, and has not committed (its customer,
    // merchant and channel are its own, so the later writer has no totals to wait for).
    const earlier = db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
         VALUES ('org_a', 'slow', 1, 1, 'c-s', 'm-s', 'Porto', 'card', 'scored')`,
      );
      wrote();
      await held;
    });
    await written;
    // A later writer commits meanwhile.
    await recordGroup(db, [{ organizationId: 'org_a', row: row('fast', 1) }]);
    const meanwhile = await readAll(db, start, 256);
    t.same(meanwhile.changes, [], "the later writer's committed row waits: the earlier one could still add rows before it");

    // A load's snapshot taken now saw the later writer, not the earlier one.
    const snapshot = await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      return feedSnapshot(tx);
    });
    release();
    await earlier;
    const after = await readAll(db, meanwhile.through, 256);
    t.same(names(after.changes), ['slow', 'fast'], 'once the earlier writer commits, both arrive, the earlier first');
    const [slow, fast] = after.changes;
    t.notOk(seenBy(snapshot, slow!.xid), 'the snapshot did not see the write in flight');
    t.ok(seenBy(snapshot, fast!.xid), 'the snapshot saw the committed one');
  },
  { kind: 'postgres', because: 'PGlite is one connection: its writers never overlap' },
);
