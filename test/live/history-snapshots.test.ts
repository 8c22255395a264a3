// An organization's history loaded from the snapshot the database keeps of it, on each back end:
// a load from the rows writes one (only for a history large enough to be worth it); a later load,
// as another process's, reads it and applies the changes made since (new transactions, late ones,
// outcomes of held transactions and of ones held only in totals), and then answers every question a
// score can ask exactly as a load from the rows does; many changes since make the load write a
// newer one. What the snapshot cannot take (a transaction older than its floor, an import) is
// loaded from the rows instead, as are damaged bytes; a snapshot of other history code is not
// read; and one organization's snapshot is never read for another.

import type { DecisionLog } from '../../src/live/decision-log.ts';
import { Tenant } from '../../src/live/tenant.ts';
import { Tenants, type SnapshotPolicy } from '../../src/live/tenants.ts';
import { DEFAULT_LABEL_DELAY_MS } from '../../src/domain/history/history.ts';
import { historyBytes, HISTORY_FORMAT } from '../../src/domain/history/snapshot.ts';
import { WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import { Rng } from '../../src/domain/rng.ts';
import type { Db } from '../../src/storage/db.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import type { FeedTransaction } from '../../src/storage/live-feed.ts';
import { eachBackend } from '../support/backends.ts';
import { tempDir } from '../support/temp.ts';
import { rm } from 'node:fs/promises';
import { answers, CUSTOMERS, DAY, differences, LOCATIONS, MERCHANTS, PAYMENT_TYPES, probes } from '../support/history-fixtures.ts';

const NOW = 1_750_000_000_000;
const POLICY: SnapshotPolicy = { minTransactions: 1_000, rewriteAfter: 100, refreshAfter: 50 };
const use = { format: HISTORY_FORMAT, labelDelay: DEFAULT_LABEL_DELAY_MS };
const noLog = { flush: async () => {} } as unknown as DecisionLog;

const tx = (i: number, time: number, extra: Partial<NewTransaction> = {}): NewTransaction => ({
  transaction_id: `t-${i}`,
  time,
  amount: 5 + (i % 97) + (i % 7) / 8,
  customer_id: CUSTOMERS[i % CUSTOMERS.length]!,
  merchant_id: MERCHANTS[(i * 7) % MERCHANTS.length]!,
  location: LOCATIONS[i % LOCATIONS.length]!,
  payment_type: PAYMENT_TYPES[(i >> 2) % PAYMENT_TYPES.length]!,
  source: 'scored',
  ...extra,
});

/** `n` transactions from `from` on, `step` apart, every ninth with an outcome known a day later. */
function rows(first: number, n: number, from: number, step: number): NewTransaction[] {
  return Array.from({ length: n }, (_, k) => {
    const i = first + k;
    const time = from + k * step;
    return i % 9 === 0 ? tx(i, time, { label: i % 27 === 0 ? 1 : 0, label_known_ms: time + DAY }) : tx(i, time);
  });
}

async function organizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
}

/** A tenant loaded as a process would load it now: from the stored snapshot when `snapshot`; its
 *  history built on a thread of its own from `threadFrom` transactions on. */
async function loadTenant(db: Db, org: string, snapshot: boolean, threadFrom?: number) {
  const tenant = new Tenant(org, organizationData(db, org).transactions, DEFAULT_LABEL_DELAY_MS, threadFrom);
  const loaded = await organizationData(db, org).history.load(NOW, tenant.loader(), undefined, snapshot ? use : undefined);
  return { tenant, loaded };
}

eachBackend('histories loaded from their stored snapshots', async (t, fx) => {
  const db = await fx.open();
  await organizations(db);
  const a = organizationData(db, 'org_a');
  // 40 days of A's payments (the first nine before the floor: totals only), B's few.
  await a.transactions.insert(rows(0, 3_000, NOW - 40 * DAY, (38 * DAY) / 3_000));
  await organizationData(db, 'org_b').transactions.insert(rows(0, 300, NOW - 10 * DAY, DAY / 60));
  const errors: unknown[] = [];
  // Where snapshots are put aside until stored (a process's is under its DATA_DIR).
  const spillDir = tempDir('snapshots-');
  t.teardown(() => rm(spillDir, { recursive: true, force: true }));
  const tenants = () =>
    new Tenants(
      db,
      noLog,
      DEFAULT_LABEL_DELAY_MS,
      () => NOW,
      () => {},
      POLICY,
      (e) => errors.push(e),
      spillDir,
    );

  const first = tenants();
  await first.get('org_a');
  await first.get('org_b');
  await first.settled();
  const stored = await a.history.snapshot();
  t.ok(stored, 'a load from the rows wrote a snapshot');
  t.equal(stored!.format, HISTORY_FORMAT, 'of this history code');
  t.equal(stored!.floor, NOW - WINDOW_HORIZON_MS, 'with the floor of the load');
  t.ok(stored!.transactions > 2_000 && stored!.bytes > 0 && stored!.pieces >= 1, `${stored!.transactions} transactions in ${stored!.bytes} bytes`);
  t.equal(await organizationData(db, 'org_b').history.snapshot(), undefined, 'none for a small history');

  // Changes after it: new payments, late ones within the horizon, outcomes of held transactions
  // and of ones before the floor.
  await a.transactions.insert(rows(5_000, 150, NOW - DAY, 60_000));
  await a.transactions.insert(rows(6_000, 40, NOW - 20 * DAY, 3_600_000));
  const rng = new Rng(7);
  const outcomes = Array.from({ length: 60 }, () => {
    const i = rng.below(3_000);
    return { transaction_id: `t-${i}`, label: (rng.uniform() < 0.4 ? 1 : 0) as 0 | 1, source: 'test', reported_at_ms: NOW - 1000 + i, reported_by: 'u1' };
  });
  await a.outcomes.apply(outcomes.slice(0, 30));
  await a.outcomes.apply(outcomes.slice(30));
  await a.outcomes.apply([{ transaction_id: 't-3', label: 1, source: 'test', reported_at_ms: NOW - 500, reported_by: 'u1' }]);

  await t.test('a load takes the snapshot and the changes since, and answers as a load from the rows', async (t) => {
    const fromSnapshot = await loadTenant(db, 'org_a', true);
    const fromRows = await loadTenant(db, 'org_a', false);
    t.ok(
      typeof fromSnapshot.loaded.restored === 'number' && fromSnapshot.loaded.restored >= 190,
      `${fromSnapshot.loaded.restored} changes applied to the snapshot`,
    );
    t.equal(fromRows.loaded.restored, undefined, 'the other from the rows');
    t.equal(fromSnapshot.tenant.history.size, fromRows.tenant.history.size, 'the same transactions held');
    const p = probes(new Rng(3), 40);
    for (const q of [NOW, NOW + DAY])
      t.same(
        differences(answers(fromSnapshot.tenant.history, q, p), answers(fromRows.tenant.history, q, p)),
        [],
        `every answer the same at +${(q - NOW) / DAY} d`,
      );
    t.ok(
      fromSnapshot.tenant.has('t-6039') &&
        fromSnapshot.tenant.sameAs('t-5000', { amount: 5 + (5000 % 97) + (5000 % 7) / 8, customer_id: CUSTOMERS[0]!, merchant_id: MERCHANTS[(5000 * 7) % 6]! }),
      'ids of the changes found',
    );
  });

  await t.test('a history built from the rows on a thread of its own is the one built on this thread', async (t) => {
    const here = await loadTenant(db, 'org_a', false, Number.POSITIVE_INFINITY);
    const thread = await loadTenant(db, 'org_a', false, 0);
    t.ok(thread.tenant.history.size > 2_000, `${thread.tenant.history.size} transactions held`);
    t.ok(Buffer.concat(historyBytes(thread.tenant.history)).equals(Buffer.concat(historyBytes(here.tenant.history))), 'the same bytes');
    const p = probes(new Rng(5), 40);
    t.same(differences(answers(thread.tenant.history, NOW, p), answers(here.tenant.history, NOW, p)), [], 'every answer the same');
    t.ok(thread.tenant.has('t-6039'), 'ids found');
  });

  await t.test('another process loads from it and, after many changes, writes a newer one', async (t) => {
    const second = tenants();
    const tenant = await second.get('org_a');
    await second.settled();
    const newer = await a.history.snapshot();
    t.ok(newer!.seen.xmax > stored!.seen.xmax, 'a snapshot of a later database snapshot');
    t.equal(newer!.transactions, tenant.history.size, 'of what the process holds');
    t.equal(newer!.floor, stored!.floor, 'built on the same floor');
    t.same(errors, [], 'no write failed');
  });

  await t.test('what a snapshot cannot take is loaded from the rows', async (t) => {
    await a.transactions.insert([tx(7_000, NOW - 35 * DAY)]);
    const older = await loadTenant(db, 'org_a', true);
    t.equal(older.loaded.restored, false, 'a transaction before its floor: refused');
    const tenant = await tenants().get('org_a');
    const rowsLoad = await loadTenant(db, 'org_a', false);
    const p = probes(new Rng(4), 20);
    t.same(
      differences(answers(tenant.history, NOW, p), answers(rowsLoad.tenant.history, NOW, p)),
      [],
      'and a process loads from the rows instead (it counts that one in its totals)',
    );

    await a.transactions.insert([tx(7_001, NOW - 2 * DAY, { source: 'import' })]);
    t.equal((await loadTenant(db, 'org_a', true)).loaded.restored, undefined, 'an import since: from the rows');
  });

  await t.test('a tenant in use is built again beside it, and put in its place', async (t) => {
    let clock = NOW;
    const process = new Tenants(
      db,
      noLog,
      DEFAULT_LABEL_DELAY_MS,
      () => clock,
      () => {},
      POLICY,
      (e) => errors.push(e),
      spillDir,
    );
    const before = await process.get('org_a');
    await process.settled();
    t.notOk(process.refreshDue('org_a'), 'not due just after its load');
    // Stored since, by another process (there is no tail here: only a refresh reads them).
    await a.transactions.insert(rows(8_000, 60, NOW - 3_600_000, 1_000));
    before.changes = POLICY.refreshAfter;
    t.ok(process.refreshDue('org_a'), 'due after many changes');
    const written = (await a.history.snapshot())!;
    const refreshing = process.refresh('org_a');
    // A change the tail hands over during the refresh reaches the tenant in use and the new one.
    const during: FeedTransaction = {
      ...tx(9_000, NOW - 60_000),
      kind: 'transaction',
      xid: 2 ** 40,
      seq: 1,
      organization_id: 'org_a',
      source: 'scored',
      label: null,
      label_known_ms: null,
    };
    process.apply([during]);
    await refreshing;
    const after = await process.get('org_a');
    t.not(after, before, 'a new tenant is in use');
    t.ok(before.has('t-9000') && after.has('t-9000'), 'the change during the refresh is in both');
    t.ok(after.has('t-8000') && !before.has('t-8000'), 'the new one has what was stored since');
    await process.settled();
    t.ok((await a.history.snapshot())!.seen.xmax > written.seen.xmax, 'and a newer snapshot is stored');

    // Two days on, its floor lags the horizon: built from the rows, on a later floor.
    clock = NOW + 2 * DAY;
    t.ok(process.refreshDue('org_a'), 'due when the floor lags');
    await process.refresh('org_a');
    const moved = await process.get('org_a');
    t.equal(moved.history.heldFrom, clock - WINDOW_HORIZON_MS, 'the floor moved');
    t.ok(moved.history.size < after.history.size, `it holds less: ${moved.history.size} < ${after.history.size}`);
    await process.stop();
    t.same(errors, [], 'nothing failed');
  });

  await t.test("a write's pieces are read only once its row names them, and its next write leaves only its own", async (t) => {
    const w = tenants();
    await w.get('org_a');
    await w.settled();
    // Pieces no row names: a write staging now, or one its process's end cut short.
    await db.query(`INSERT INTO history_snapshot_pieces (organization_id, generation, piece, bytes) VALUES ('org_a', 7, 0, '\\x00ff'::bytea)`);
    t.equal(typeof (await loadTenant(db, 'org_a', true)).loaded.restored, 'number', 'the stored snapshot is read, not the staged pieces');
    const [before] = await db.query<{ generation: number }>(`SELECT generation FROM history_snapshots WHERE organization_id = 'org_a'`);
    // Of other history code: the next process loads from the rows and writes one.
    await db.query(`UPDATE history_snapshots SET format = 'h1-0000000000000000' WHERE organization_id = 'org_a'`);
    const again = tenants();
    await again.get('org_a');
    await again.settled();
    const [now] = await db.query<{ generation: number; format: string }>(`SELECT generation, format FROM history_snapshots WHERE organization_id = 'org_a'`);
    t.equal(now!.format, HISTORY_FORMAT, 'a new snapshot is stored');
    t.not(now!.generation, before!.generation, 'under a generation of its own');
    const left = (await db.query<{ generation: number }>(`SELECT DISTINCT generation FROM history_snapshot_pieces WHERE organization_id = 'org_a'`)).map(
      (r) => r.generation,
    );
    if (fx.kind === 'pglite') t.same(left, [now!.generation], "only its pieces are left: the replaced one's and the cut write's are deleted");
    else
      t.same(
        left.sort((x, y) => x - y),
        [7, now!.generation].sort((x, y) => x - y),
        "the replaced one's are deleted; those another process may be staging are left",
      );
    t.equal(typeof (await loadTenant(db, 'org_a', true)).loaded.restored, 'number', 'and the new one is read');
  });

  await t.test('a snapshot of other history code, or of another organization, is never read', async (t) => {
    const t2 = tenants();
    await t2.get('org_a');
    await t2.settled();
    t.equal(typeof (await loadTenant(db, 'org_a', true)).loaded.restored, 'number', 'a fresh one is read');
    await db.query(`UPDATE history_snapshot_pieces SET bytes = '\\x00ff'::bytea WHERE organization_id = 'org_a' AND piece = 0`);
    t.equal((await loadTenant(db, 'org_a', true)).loaded.restored, false, 'damaged bytes: refused');
    const t3 = tenants();
    t.ok((await t3.get('org_a')).has('t-5000'), 'and a process loads from the rows instead');
    await t3.settled();
    await db.query(`UPDATE history_snapshots SET format = 'h1-0000000000000000' WHERE organization_id = 'org_a'`);
    t.equal((await loadTenant(db, 'org_a', true)).loaded.restored, undefined, 'another code: from the rows');
    const b = await loadTenant(db, 'org_b', true);
    t.equal(b.loaded.restored, undefined, "B has none, and does not get A's");
    t.equal(b.tenant.history.size, 300, 'B holds its own 300');
    t.notOk(b.tenant.has('t-5000'), "and none of A's");
  });
});
