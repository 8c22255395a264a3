// While one organization's history loads (its first score after a start), another organization's
// requests keep being answered: the load reads its rows in slices with turns of the event loop
// between and builds the history on a thread of its own (60,000 transactions: over the thread's
// threshold), and on the embedded database builds it after its database transaction, so the other
// organization's commits do not wait for it. The loaded history then answers as the stored rows say.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor } from '../support/accounts.ts';

const HELD = 60_000;

for (const backend of backends()) {
  t.test(`on ${backend.name}: another organization is answered while one loads`, async (t) => {
    // A deadline a busy CI host cannot reach by CPU starvation alone (the default is 2 s): what is
    // asserted is that the load never holds the other organization back, not how fast a shared
    // host commits.
    const service = await liveFor(t, backend, { SCORE_DEADLINE_SECONDS: 10 });
    let live = service.live;
    const big = await live.organization('Big');
    const small = await live.organization('Small');
    // The big organization's history, stored as an import would store it: 60,000 payments of 600
    // customers at 40 merchants over the last 20 days.
    const now = Date.now();
    await live.s.service.db.query(
      `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, label, label_known_ms)
       SELECT $1, 'held-' || x, $2::float8 - (${HELD} - x) * 28000.0, 10 + x % 90, 'c' || (x % 600), 'm' || (x % 40), 'Lisbon', 'wallet', 'import',
              CASE WHEN x % 7 = 0 THEN (x % 50 = 0)::int END, CASE WHEN x % 7 = 0 THEN $2::float8 - (${HELD} - x) * 28000.0 + 86400000 END
       FROM generate_series(1, ${HELD}) AS x`,
      [big.id, now - 60_000],
    );
    // A restart: nothing is loaded; the small organization is loaded first.
    live = await service.restart();
    const probe = (i: number) => ({ transaction_id: `small-${i}`, amount: 5 + i, customer_id: 'small-c', merchant_id: 'small-m' });
    t.equal((await live.score(small, probe(0))).statusCode, 200);

    let bigDone = false;
    const bigAnswer = live.scoreLoaded(big, { transaction_id: 'big-first', amount: 33, customer_id: 'c7', merchant_id: 'm7' }).finally(() => (bigDone = true));
    const during: number[] = [];
    for (let i = 1; !bigDone && i < 10_000; i++) {
      const r = await live.score(small, probe(i));
      if (!bigDone) during.push(r.statusCode);
    }
    const first = await bigAnswer;
    t.equal(first.statusCode, 200, 'the big organization is answered');
    t.ok(during.length >= 3, `${during.length} of the small organization's requests answered while it loaded`);
    t.ok(
      during.every((s) => s === 200),
      `all of them 200 (${[...new Set(during)].join(', ')})`,
    );
    t.equal(first.json().entity_history.c7.prior_transactions, HELD / 600, "the loaded history counts the customer's stored payments");
    t.equal(live.s.service.tenants.heldTransactions(), HELD + 1 + during.length + 1 + 1, 'every stored and scored transaction held');
  });
}
