// Imported transactions' point-in-time features (src/jobs/imported-features.ts), on each storage back
// end, against the service's own scoring: a seeded random history is scored live by one organization,
// in time order with the server's clock at each payment's time and each outcome reported when it
// became known; the same history is imported (labels and their known times) by another, in shuffled
// order, and replayed. Every imported transaction's stored features equal, to the bit, those the
// live one was scored with. A later transaction never reaches an earlier one's features (one planted
// after the replay changes nothing stored); a label known only later never counts; a second replay
// stores nothing; and another organization's import is never read.

import t from 'tap';
import { computeImportedFeatures } from '../../src/jobs/imported-features.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { EMBEDDED_REPLAY_PAGE_ROWS, REPLAY_PAGE_ROWS } from '../../src/storage/imported-features.ts';
import type { Db } from '../../src/storage/db.ts';
import { liveFor } from '../support/accounts.ts';
import { backends } from '../support/server.ts';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1);

/** A seeded generator (mulberry32): the same history on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface Payment {
  id: string;
  time: number;
  amount: number;
  customer: string;
  merchant: string;
  location: string;
  type: string;
  /** The outcome and when it became known. */
  outcome?: { fraud: boolean; known: number };
}

/** 240 payments over 20 days among 25 customers and 8 merchants; a fraud or a legitimate outcome
 *  on a third of them, known a day to a week later. */
function history(): Payment[] {
  const next = random(58);
  const out: Payment[] = [];
  let time = START;
  for (let i = 0; i < 240; i++) {
    time += 1 + Math.floor((next() * (20 * DAY)) / 240) * 2;
    const p: Payment = {
      id: `p-${i}`,
      time,
      amount: Math.round(next() * 50_000) / 100,
      customer: `c-${Math.floor(next() * 25)}`,
      merchant: `m-${Math.floor(next() * 8)}`,
      location: ['Lisbon', 'Porto', 'Madrid'][Math.floor(next() * 3)]!,
      type: ['card_present', 'online'][Math.floor(next() * 2)]!,
    };
    if (next() < 0.33) p.outcome = { fraud: next() < 0.4, known: time + DAY + Math.floor(next() * 6 * DAY) };
    out.push(p);
  }
  return out;
}

async function storedFeatures(db: Db, organizationId: string): Promise<Map<string, string>> {
  const rows = await db.query<{ transaction_id: string; features: Uint8Array | null }>(
    // A scored transaction's features are in its row; an imported one's in imported_features.
    'SELECT t.transaction_id, coalesce(t.features, f.features) AS features FROM transactions t LEFT JOIN imported_features f ON f.seq = t.seq WHERE t.organization_id = $1',
    [organizationId],
  );
  return new Map(rows.map((r) => [r.transaction_id, r.features ? Buffer.from(r.features).toString('hex') : 'none']));
}

for (const backend of backends()) {
  t.test(`imported transactions' features as of their own time, on ${backend.name}`, async (t) => {
    let now = START;
    const { live } = await liveFor(t, backend, {}, undefined, () => now);
    const { app, service } = live.s;
    const bundle = service.scorer!.bundle;
    const payments = history();
    const end = payments.at(-1)!.time;

    // Scored live: each payment at its own time, each outcome reported when it became known.
    const scoredOrg = await live.organization('Scored');
    const events = [
      ...payments.map((p) => ({ at: p.time, p, kind: 'score' as const })),
      ...payments.filter((p) => p.outcome && p.outcome.known < end).map((p) => ({ at: p.outcome!.known, p, kind: 'outcome' as const })),
    ].sort((a, b) => a.at - b.at || (a.kind === 'outcome' ? -1 : 1));
    for (const e of events) {
      now = e.at;
      const res =
        e.kind === 'score'
          ? await live.score(scoredOrg, {
              transaction_id: e.p.id,
              amount: e.p.amount,
              customer_id: e.p.customer,
              merchant_id: e.p.merchant,
              location: e.p.location,
              payment_type: e.p.type,
            })
          : await app.inject({
              method: 'POST',
              url: `/api/v1/transactions/${e.p.id}/outcome`,
              headers: { authorization: `Bearer ${scoredOrg.key}` },
              payload: { outcome: e.p.outcome!.fraud ? 'fraud' : 'legit', source: 'chargeback', reported_at: new Date(e.at).toISOString() },
            });
      if (res.statusCode !== 200) t.fail(`${e.kind} ${e.p.id}: ${res.statusCode} ${res.body}`);
    }
    await service.decisionLog.flush();
    const scored = await storedFeatures(service.db, scoredOrg.id);
    t.equal([...scored.values()].filter((f) => f !== 'none').length, payments.length, 'every scored payment has its features');
    // What the scored organization knew: the labels it was told, when it was told them.
    const [known] = await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE organization_id = $1 AND label IS NOT NULL', [
      scoredOrg.id,
    ]);
    t.ok(known!.n > 40, `${known!.n} outcomes reported`);

    // Imported: the same payments in shuffled order, each with its label and when it became known
    // (a label known after the last payment never counted above, so it is not given here either).
    const importedOrg = await live.organization('Imported');
    const shuffle = random(7);
    const rows: NewTransaction[] = payments
      .map((p) => ({ p, k: shuffle() }))
      .sort((a, b) => a.k - b.k)
      .map(({ p }) => ({
        transaction_id: p.id,
        time: p.time,
        amount: p.amount,
        customer_id: p.customer,
        merchant_id: p.merchant,
        location: p.location,
        payment_type: p.type,
        source: 'import',
        ...(p.outcome && p.outcome.known < end ? { label: p.outcome.fraud ? 1 : 0, label_known_ms: p.outcome.known } : {}),
      }));
    const data = organizationData(service.db, importedOrg.id);
    for (let i = 0; i < rows.length; i += 100) await data.transactions.insert(rows.slice(i, i + 100));
    t.equal(await data.importedFeatures.featureless(), payments.length, 'imported without features');

    const fractions: number[] = [];
    const stored = await computeImportedFeatures(service.db, importedOrg.id, bundle, { progress: (f) => void fractions.push(f) });
    t.equal(stored, payments.length, 'every imported transaction got its features');
    t.equal(fractions.at(-1), 1, 'progress ends at 1');
    const imported = await storedFeatures(service.db, importedOrg.id);
    const differ = payments.filter((p) => imported.get(p.id) !== scored.get(p.id)).map((p) => p.id);
    t.same(differ, [], 'each equals the features it was scored with live, to the bit');
    t.not(imported.get('p-0'), scored.get('p-100'), 'and features differ between payments (the comparison can fail)');

    t.equal(await computeImportedFeatures(service.db, importedOrg.id, bundle), 0, 'a second replay stores nothing');

    // A payment imported later, older than all but the first: it gets its own point-in-time
    // features, and nothing stored for the payments after it changes.
    const first = payments[0]!;
    await data.transactions.insert([
      {
        transaction_id: 'late',
        time: first.time + 1,
        amount: 99,
        customer_id: first.customer,
        merchant_id: first.merchant,
        location: first.location,
        payment_type: first.type,
        source: 'import',
      },
    ]);
    t.equal(await computeImportedFeatures(service.db, importedOrg.id, bundle), 1, 'the late import alone');
    const after = await storedFeatures(service.db, importedOrg.id);
    t.same(
      payments.filter((p) => after.get(p.id) !== imported.get(p.id)).map((p) => p.id),
      [],
      'a later import never reaches features already stored',
    );
    t.not(after.get('late'), 'none', 'the late one has features');

    // Another organization's rows are never read: the scored organization's history is not this one's.
    const alone = await live.organization('Alone');
    await organizationData(service.db, alone.id).transactions.insert([
      {
        transaction_id: 'p-5',
        time: payments[5]!.time,
        amount: payments[5]!.amount,
        customer_id: payments[5]!.customer,
        merchant_id: payments[5]!.merchant,
        location: payments[5]!.location,
        payment_type: payments[5]!.type,
        source: 'import',
      },
    ]);
    t.equal(await computeImportedFeatures(service.db, alone.id, bundle), 1);
    const lone = (await storedFeatures(service.db, alone.id)).get('p-5');
    t.not(lone, imported.get('p-5'), "its features come from its own history alone (none), not the others' payments before it");
  });
}

// A replay stopped between pages (the import job stopped with its server) keeps what it stored, and
// the next run stores the rest: the same features, to the bit, as one uninterrupted replay of the
// same history. The replay runs on a thread of its own; on PostgreSQL it reads and stores on
// connections of that thread, on the embedded database through this one.
for (const backend of backends()) {
  t.test(`a replay stopped partway and run again stores what one run stores, on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend, {});
    const { service } = live.s;
    const bundle = service.scorer!.bundle;
    const next = random(59);
    const rows: NewTransaction[] = Array.from({ length: 12_000 }, (_, i) => ({
      transaction_id: `r-${i}`,
      time: START + i * 60_000,
      amount: Math.round(next() * 50_000) / 100,
      customer_id: `c-${Math.floor(next() * 400)}`,
      merchant_id: `m-${Math.floor(next() * 40)}`,
      location: 'Lisbon',
      payment_type: 'online',
      source: 'import',
      ...(next() < 0.2 ? { label: next() < 0.3 ? 1 : 0, label_known_ms: START + i * 60_000 + 3 * DAY } : {}),
    }));
    const whole = await live.organization('Whole');
    const stopped = await live.organization('Stopped');
    for (const org of [whole, stopped]) {
      const data = organizationData(service.db, org.id);
      for (let i = 0; i < rows.length; i += 2_000) await data.transactions.insert(rows.slice(i, i + 2_000));
    }

    t.equal(await computeImportedFeatures(service.db, whole.id, bundle), rows.length, 'one run: every row');
    let pages = 0;
    const first = await computeImportedFeatures(service.db, stopped.id, bundle, { progress: () => void pages++, stopped: () => pages > 0 });
    // A page is 5,000 transactions on PostgreSQL, 1,000 on the embedded database.
    const page = backend.name === 'pglite' ? EMBEDDED_REPLAY_PAGE_ROWS : REPLAY_PAGE_ROWS;
    t.ok(first >= page && first < rows.length, `stopped after a page: ${first} of ${rows.length} stored`);
    t.equal(await organizationData(service.db, stopped.id).importedFeatures.featureless(), rows.length - first, 'the rest still without features');
    t.equal(await computeImportedFeatures(service.db, stopped.id, bundle), rows.length - first, 'the next run stores the rest');

    const a = await storedFeatures(service.db, whole.id);
    const b = await storedFeatures(service.db, stopped.id);
    t.same(
      rows.filter((r) => a.get(r.transaction_id) !== b.get(r.transaction_id) || a.get(r.transaction_id) === 'none').map((r) => r.transaction_id),
      [],
      'every row has features, the same in both',
    );
  });
}
