// Two server processes on one real PostgreSQL share an organization's live state through the live
// feed: what one records counts in the other's features and evidence within the lag, an outcome
// reported on one changes the other's graph features, one transaction id sent to both at once is
// recorded once (the loser answers with the winner's decision), concurrent requests on both over
// the same entities are all stored with their totals, a decision acknowledged by a process killed
// right after its 200 is readable on the other, and the catch-up poll finds a transaction whose
// notification never came.

import t from 'tap';
import postgres from 'postgres';
import { backends, freshDatabase } from '../support/server.ts';
import { getWithKey, serverPair, SignIn, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';

/** Longer than any lag the feed should show here (NOTIFY wakes the tail within milliseconds; a
 *  loaded CI machine is given room). */
const LAG_BUDGET_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const pg = backends().find((b) => b.name === 'postgres');

t.test('two server processes on one PostgreSQL', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(pg!.databaseUrl!);
  const signIn = await SignIn.start();
  // The key's rate limit is raised for the concurrent load below.
  const env = { ...signIn.env, DATABASE_URL: db.url, SCORE_RATE_PER_MINUTE: '100000' };
  const servers: ServerProcess[] = [];
  t.teardown(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await signIn.close();
    await db.drop();
  });
  const { a, b, org } = await serverPair(env, servers, signIn, 'shared');
  const other = await signIn.organization(a.base, 'bystander');
  const score = (s: ServerProcess, body: Record<string, unknown>, o = org) => withKey(s.base, o.secret, '/api/v1/risk/score', body);

  t.test("a transaction recorded on A counts in B's velocity features and evidence", async (t) => {
    // B loads the organization before A records anything, so what follows reaches B by the feed.
    t.equal((await score(b, { transaction_id: 'warm-b', amount: 5, customer_id: 'c-warm', merchant_id: 'm-warm' })).status, 200);
    const first = await score(a, { transaction_id: 'v-1', amount: 40, customer_id: 'c-v', merchant_id: 'm-v' });
    t.equal(first.status, 200);
    t.equal(first.json.entity_history['c-v'].prior_transactions, 0);
    await sleep(LAG_BUDGET_MS);
    const second = await score(b, { transaction_id: 'v-2', amount: 41, customer_id: 'c-v', merchant_id: 'm-v2' });
    t.equal(second.status, 200);
    t.equal(second.json.entity_history['c-v'].prior_transactions, 1, "B counts A's transaction for the customer");
    t.same(
      second.json.graph_evidence['c-v'].map((e: { transaction_id: string }) => e.transaction_id),
      ['v-1'],
      "B's evidence shows A's transaction",
    );
    // And back: A sees B's.
    await sleep(LAG_BUDGET_MS);
    const third = await score(a, { transaction_id: 'v-3', amount: 42, customer_id: 'c-v', merchant_id: 'm-v' });
    t.equal(third.json.entity_history['c-v'].prior_transactions, 2, "A counts its own and B's");
    // Another organization with the same customer and merchant ids sees none of it.
    const stranger = await score(b, { transaction_id: 'v-1', amount: 40, customer_id: 'c-v', merchant_id: 'm-v' }, other);
    t.equal(stranger.status, 200);
    t.equal(stranger.json.entity_history['c-v'].prior_transactions, 0, "the other organization's history is its own");
    t.notOk(stranger.replayed, 'its v-1 is its own transaction');
  });

  t.test("an outcome reported on B changes A's graph features", async (t) => {
    t.equal((await score(a, { transaction_id: 'g-1', amount: 900, customer_id: 'c-g1', merchant_id: 'm-g' })).status, 200);
    await sleep(LAG_BUDGET_MS);
    const before = await score(a, { transaction_id: 'g-2', amount: 30, customer_id: 'c-g2', merchant_id: 'm-g' });
    t.equal(before.json.graph_evidence['m-g'].find((e: { transaction_id: string }) => e.transaction_id === 'g-1').outcome, 'unknown');
    const reported = await withKey(b.base, org.secret, '/api/v1/transactions/g-1/outcome', { outcome: 'fraud', source: 'chargeback' });
    t.equal(reported.status, 200, reported.text);
    await sleep(LAG_BUDGET_MS);
    const after = await score(a, { transaction_id: 'g-3', amount: 30, customer_id: 'c-g3', merchant_id: 'm-g' });
    t.equal(
      after.json.graph_evidence['m-g'].find((e: { transaction_id: string }) => e.transaction_id === 'g-1').outcome,
      'fraud',
      "A's evidence knows the fraud B was told of",
    );
    t.ok(
      after.json.channel_scores.graph > before.json.channel_scores.graph,
      `A's graph channel rises (${before.json.channel_scores.graph} → ${after.json.channel_scores.graph})`,
    );
  });

  t.test('one transaction id sent to A and B at once is recorded once', async (t) => {
    for (let i = 0; i < 12; i++) {
      const body = { transaction_id: `race-${i}`, amount: 70 + i, customer_id: `c-r${i % 3}`, merchant_id: 'm-r' };
      const [x, y] = await Promise.all([score(a, body), score(b, body)]);
      t.equal(x.status, 200);
      t.equal(y.status, 200);
      t.equal(x.text, y.text, `race-${i}: both answers are the one stored decision`);
      t.ok(!(x.replayed && y.replayed), `race-${i}: at most one is a replay`);
    }
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const rows =
        await sql`SELECT transaction_id, count(*)::int AS n FROM transactions WHERE organization_id = ${org.id} AND transaction_id LIKE 'race-%' GROUP BY 1`;
      t.equal(rows.length, 12);
      t.ok(
        rows.every((r) => r.n === 1),
        'each id stored once',
      );
    } finally {
      await sql.end();
    }
    // Different values under a racing id: one is recorded, the other is 409.
    const [x, y] = await Promise.all([
      score(a, { transaction_id: 'race-x', amount: 1, customer_id: 'c-x', merchant_id: 'm-x' }),
      score(b, { transaction_id: 'race-x', amount: 2, customer_id: 'c-x', merchant_id: 'm-x' }),
    ]);
    t.same([x.status, y.status].sort(), [200, 409], 'the loser with other values gets duplicate_transaction');
  });

  t.test('the catch-up poll recovers a transaction whose notification was lost', async (t) => {
    t.equal((await score(b, { transaction_id: 'p-0', amount: 5, customer_id: 'c-p0', merchant_id: 'm-p' })).status, 200);
    // Recorded with no NOTIFY: only the poll can find it.
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      await sql`INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
                VALUES (${org.id}, 'p-lost', ${Date.now() - 1000}, 25, 'c-p', 'm-p', 'unknown', 'unknown', 'scored')`;
    } finally {
      await sql.end();
    }
    const seen = async () =>
      (await score(b, { transaction_id: `p-probe-${Date.now()}`, amount: 5, customer_id: 'c-p', merchant_id: 'm-p2' })).json.entity_history['c-p']
        .prior_transactions;
    const started = performance.now();
    let count = 0;
    while (performance.now() - started < 5_000 && (count = await seen()) === 0) await sleep(100);
    t.ok(count >= 1, `B counts the transaction without its notification after ${Math.round(performance.now() - started)} ms (poll every 1 s)`);
  });

  t.test('concurrent requests on both over the same customers, merchants and channels are all stored once, with their totals', async (t) => {
    // Writers of both processes commit side by side and upsert the same totals rows: they must wait
    // for each other, never deadlock (which would answer 500).
    const n = 600;
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 24 }, async (_, lane) => {
        for (let i = next++; i < n; i = next++) {
          const body = {
            transaction_id: `busy-${i}`,
            amount: 10 + (i % 50),
            customer_id: `c-busy${i % 7}`,
            merchant_id: `m-busy${i % 3}`,
            location: i % 2 ? 'Lisbon' : 'Porto',
            payment_type: 'wallet',
          };
          statuses.push((await score(lane % 2 ? a : b, body)).status);
        }
      }),
    );
    t.same([...new Set(statuses)], [200], `all ${n} answered 200`);
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const [stored] = await sql`SELECT count(*)::int AS n FROM transactions WHERE organization_id = ${org.id} AND transaction_id LIKE 'busy-%'`;
      t.equal(stored!.n, n, 'each stored once');
      const totals =
        await sql`SELECT kind, sum(transactions)::int AS n FROM entity_totals WHERE organization_id = ${org.id} AND (key LIKE 'c-busy%' OR key LIKE 'm-busy%') GROUP BY kind ORDER BY kind`;
      t.same(
        totals.map((r) => [r.kind, r.n]),
        [
          ['c', n],
          ['m', n],
        ],
        "the customers' and merchants' totals count every one",
      );
    } finally {
      await sql.end();
    }
  });

  t.test('A killed with SIGKILL right after a 200 leaves its decision readable on B', async (t) => {
    const answered = await score(a, { transaction_id: 'k-1', amount: 333, customer_id: 'c-k', merchant_id: 'm-k' });
    t.equal(answered.status, 200);
    await a.stop('SIGKILL');
    const read = await getWithKey(b.base, org.secret, '/api/v1/transactions/k-1');
    t.equal(read.status, 200);
    t.equal(read.json.risk_score, answered.json.risk_score);
    t.equal(read.json.decision, answered.json.decision);
    const retry = await score(b, { transaction_id: 'k-1', amount: 333, customer_id: 'c-k', merchant_id: 'm-k' });
    t.ok(retry.replayed, 'a retry on B is a replay of what A answered');
    t.equal(retry.text, answered.text);
  });
});
