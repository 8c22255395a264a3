// Bounded memory, end to end through the real app on each storage back end: an organization whose
// stored history reaches back four months. Its tenant holds the last 31 days of transactions and
// the rest as the totals the database keeps, and answers as the whole history would: features
// (against a history built from every stored row), prior counts, graph evidence read from the
// database for a customer not seen in 31 days, an outcome reported on a transaction before the
// floor, and a retry of such a transaction's id.

import t from 'tap';
import { extractOne } from '../../src/domain/features/extract.ts';
import { DEFAULT_LABEL_DELAY_MS, History } from '../../src/domain/history/history.ts';
import { WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { Rng } from '../../src/domain/rng.ts';
import { backends } from '../support/server.ts';
import { DAY, generate, probes, type Tx } from '../support/history-fixtures.ts';
import { liveFor } from '../support/accounts.ts';

/** Same numbers within a relative 1e-9 (sums added in another order round differently), NaN equal to NaN. */
function closeNumbers(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (!(x === y || (Number.isNaN(x) && Number.isNaN(y)) || Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y)))) return false;
  }
  return a.length === b.length;
}

const features = (h: History, tx: Parameters<typeof extractOne>[0]) => {
  const m = extractOne(tx, h);
  return [...m.tabular, ...m.behavioral, ...m.velocity, ...m.graph];
};

for (const backend of backends()) {
  t.test(`a tenant over months of stored history on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const org = await live.organization('Archive');
    const rng = new Rng(7);
    // The fixtures' ~100 days of transactions, moved to end an hour ago; one customer last seen
    // two months ago, with six transactions then.
    const generated = generate(rng, 1600);
    const shift = Date.now() - 3_600_000 - generated[generated.length - 1]!.time;
    const rows: Tx[] = generated.map((tx) => ({
      ...tx,
      time: tx.time + shift,
      ...(tx.labelKnownAt !== undefined ? { labelKnownAt: tx.labelKnownAt + shift } : {}),
    }));
    const dormant = Array.from(
      { length: 6 },
      (_, i): Tx => ({
        transaction_id: `dormant-${i}`,
        time: Date.now() - 60 * DAY + i * 60_000,
        amount: 30 + i,
        customer_id: 'dormant',
        merchant_id: 'm0',
        location: 'Faro',
        payment_type: 'online',
        ...(i === 0 ? { label: 1 as const } : {}),
      }),
    );
    const all = [...rows, ...dormant].sort((a, b) => a.time - b.time);
    const stored = (tx: Tx): NewTransaction => {
      const labelled = tx.label === 0 || tx.label === 1;
      return {
        ...tx,
        source: 'import',
        label: labelled ? tx.label! : null,
        label_known_ms: labelled ? (tx.labelKnownAt ?? tx.time + DEFAULT_LABEL_DELAY_MS) : null,
      };
    };
    await organizationData(live.s.service.db, org.id).transactions.insert(all.map(stored));
    // The tail reads the stored rows before the organization is loaded (an import read by the tail
    // later would make the tenant load afresh, and the outcome below would then come from the load).
    await live.s.service.tail.catchUp();
    t.ok(all[0]!.time < Date.now() - 60 * DAY, 'the stored history reaches back two months');

    const whole = new History().withRecords();
    for (const tx of all) whole.add(tx);

    // The first score loads the tenant.
    const first = await live.scoreLoaded(org, {
      amount: 44,
      customer_id: 'dormant',
      merchant_id: 'm1',
      location: 'Faro',
      payment_type: 'online',
      transaction_id: 'probe-1',
    });
    t.equal(first.statusCode, 200);
    const body = first.json();
    const tenant = await live.s.service.tenants.get(org.id);
    const held = tenant.history.transactions.length;
    t.ok(held < all.length / 2, `the tenant holds ${held} of ${all.length} transactions`);
    t.ok(tenant.history.heldFrom > Date.now() - WINDOW_HORIZON_MS - 60_000, 'from 31 days back');
    t.same(body.entity_history.dormant, { role: 'customer', prior_transactions: 6, is_new: false }, 'the dormant customer counts its six transactions');
    t.same(
      body.graph_evidence.dormant.map((e: { transaction_id: string; outcome: string }) => [e.transaction_id, e.outcome]),
      [
        ['dormant-5', 'unknown'],
        ['dormant-4', 'unknown'],
        ['dormant-3', 'unknown'],
        ['dormant-2', 'unknown'],
        ['dormant-1', 'unknown'],
      ],
      'evidence from before the floor, read from the database, newest first',
    );
    t.same(body.graph_evidence.m1.length, 5, "the merchant's evidence");

    // Features at a time after the probe: the probe joins both histories.
    whole.add({ time: tenant.history.newest, amount: 44, customer_id: 'dormant', merchant_id: 'm1', location: 'Faro', payment_type: 'online' });
    const at = tenant.history.newest + 60_000;
    const ask = [...probes(rng, 40), { amount: 9, customer_id: 'dormant', merchant_id: 'm0', location: 'Faro', payment_type: 'online', time: 0 }];
    const differ = ask.filter((p) => !closeNumbers(features(whole, { ...p, time: at }), features(tenant.history, { ...p, time: at })));
    t.same(differ, [], "every probe has the whole history's features");

    // An outcome on a transaction from before the floor: a fraud, known now.
    const old = all.find((tx) => tx.time < tenant.history.heldFrom - 10 * DAY && tx.label === undefined && tx.merchant_id === 'm2')!;
    const knownAt = Date.now() - 1000;
    const reported = await live.s.app.inject({
      method: 'POST',
      url: '/api/v1/outcomes',
      headers: { authorization: `Bearer ${org.key}` },
      payload: { outcomes: [{ transaction_id: old.transaction_id, outcome: 'fraud', reported_at: new Date(knownAt).toISOString() }] },
    });
    t.equal(reported.statusCode, 200, reported.body);
    const k = whole.transactions.length;
    for (let i = 0; i < k; i++) {
      if (whole.transactions.transactionId(i) === old.transaction_id) whole.setOutcome(i, 1, knownAt);
    }
    const later = at + 60_000;
    const m2 = { amount: 20, customer_id: old.customer_id, merchant_id: 'm2', location: old.location, payment_type: old.payment_type, time: later };
    t.ok(closeNumbers(features(whole, m2), features(tenant.history, m2)), 'the outcome on a transaction held only in totals counts as in the whole history');
    t.equal(tenant.history.customerKnownFrauds(old.customer_id, later), whole.customerKnownFrauds(old.customer_id, later));

    // A retry of a transaction id from before the floor: the tenant does not hold it, the database does.
    const retry = await live.score(org, {
      amount: dormant[2]!.amount,
      customer_id: 'dormant',
      merchant_id: 'm0',
      location: 'Faro',
      payment_type: 'online',
      transaction_id: 'dormant-2',
    });
    t.equal(retry.statusCode, 409, 'an imported id is not scored again');
    t.equal(tenant.history.transactions.length, held, 'and nothing was added to the history');
  });
}
