// Live data per organization, end to end through the real app on each storage back end: the public
// sandbox reads and records nothing of any organization; each organization's key scores against and
// records into its own history only; a retried transaction id is a replay (same body, header) or a
// 409; concurrent copies record one transaction; an import's rows arriving leave the tenant in use
// answering until they stop, then it is built again holding them (this process's own import: once
// it ends, however long between its chunks); and the decision survives a restart.

import t, { type Test } from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type LiveService } from '../support/accounts.ts';
import { organizationData } from '../../src/storage/organization-data.ts';

const stored = async (live: LiveService, where = 'TRUE', params: unknown[] = []) => {
  await live.s.service.decisionLog.flush();
  const [row] = await live.s.service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE ${where}`, params);
  return row!.n;
};

/** Every transaction id a response shows as evidence. */
const evidenceIds = (r: { graph_evidence: Record<string, { transaction_id: string }[]> }) =>
  Object.values(r.graph_evidence)
    .flat()
    .map((e) => e.transaction_id);

/** A response without its timings (which differ from one run of the same request to the next). */
/** An imported row of a customer at a merchant (no label). */
const importedRow = (transaction_id: string, time: number, customer_id: string, merchant_id: string) => ({
  transaction_id,
  time,
  amount: 30,
  customer_id,
  merchant_id,
  location: 'Lisbon',
  payment_type: 'card_present',
  source: 'import' as const,
  label: null,
  label_known_ms: null,
});
const timeless = (r: Record<string, unknown>) => ({ ...r, stages: undefined, latency_ms: undefined });

for (const backend of backends()) {
  t.test(`tenants on ${backend.name}`, async (t) => {
    const service = await liveFor(t, backend);
    let live = service.live;
    const sandbox = (await live.s.service.sandbox.built()).history;
    const known = sandbox.recent('customer', 'C000001', Infinity, 1)[0]!;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');

    await t.test('the public sandbox: the same answer every time, nothing recorded, no organization read', async (t) => {
      const body = {
        amount: 42.5,
        customer_id: known.customer_id,
        merchant_id: known.merchant_id,
        location: known.location,
        payment_type: known.payment_type,
        transaction_id: 'what-if-1',
      };
      const sizeBefore = sandbox.size;
      const storedBefore = await stored(live);
      const first = (await live.guest(body)).json();
      // Acme records transactions with the same customer and merchant ids.
      for (let i = 0; i < 3; i++) t.equal((await live.score(a, { ...body, transaction_id: `acme-secret-${i}`, amount: 900 + i })).statusCode, 200);
      const again = await live.guest(body);
      t.equal(again.statusCode, 200);
      const second = again.json();
      t.same(timeless(second), timeless(first), 'the same request gets the same answer, whatever organizations record');
      t.notOk(
        evidenceIds(second).some((id) => id.startsWith('acme-secret')),
        "none of Acme's transactions in the evidence",
      );
      t.equal(
        second.entity_history[known.customer_id].prior_transactions,
        sandbox.priors({ ...known, time: live.s.service.sandbox.asOf }).customer,
        "counts are the sandbox's",
      );
      t.match(second.notes[0], /What-if: scored against the public sandbox .*nothing was recorded/);
      t.notOk(
        second.stages.some((s: { name: string }) => s.name === 'record'),
        'no record stage',
      );
      t.equal(sandbox.size, sizeBefore, 'the sandbox is unchanged');
      t.equal(await stored(live), storedBefore + 3, "only Acme's three transactions were stored");
      t.equal(await stored(live, 'transaction_id = $1', ['what-if-1']), 0, 'the guest transaction was not stored');

      const onlyAcme = (await live.guest({ amount: 10, customer_id: 'acme-only-customer', merchant_id: 'acme-only-merchant' })).json();
      t.equal(onlyAcme.entity_history['acme-only-customer'].is_new, true);
      await live.score(a, { amount: 10, customer_id: 'acme-only-customer', merchant_id: 'acme-only-merchant', transaction_id: 'acme-only-1' });
      const afterAcme = (await live.guest({ amount: 10, customer_id: 'acme-only-customer', merchant_id: 'acme-only-merchant' })).json();
      t.equal(afterAcme.entity_history['acme-only-customer'].is_new, true, 'an id only Acme uses is still new to guests');
      t.same(afterAcme.graph_evidence, {}, 'and has no evidence');
    });

    await t.test('each organization scores against its own history only', async (t) => {
      const tx = (i: number) => ({
        amount: 20 + i,
        customer_id: 'shared-customer',
        merchant_id: 'shared-merchant',
        location: 'Lisbon',
        payment_type: 'wallet',
        transaction_id: `a-${i}`,
      });
      for (let i = 0; i < 3; i++) t.equal((await live.score(a, tx(i))).statusCode, 200);
      const fromB = (await live.score(b, { ...tx(9), transaction_id: 'b-1' })).json();
      t.equal(fromB.entity_history['shared-customer'].prior_transactions, 0, "B's history has none of A's transactions");
      t.equal(fromB.entity_history['shared-merchant'].is_new, true);
      t.same(evidenceIds(fromB), [], 'no evidence from A');
      t.equal(fromB.path, 'COLD_START', 'a new organization starts empty: cold start');
      const fromA = (await live.score(a, tx(3))).json();
      t.equal(fromA.entity_history['shared-customer'].prior_transactions, 3, 'A sees its own three');
      t.same(
        fromA.graph_evidence['shared-customer'].map((e: { transaction_id: string }) => e.transaction_id),
        ['a-2', 'a-1', 'a-0'],
      );
      t.notOk(evidenceIds(fromA).includes('b-1'), "A does not see B's");
      t.same(
        fromA.stages.map((s: { name: string }) => s.name),
        ['history', 'features', 'model', 'rules', 'explain', 'evidence', 'record'],
      );
      t.equal(await stored(live, 'organization_id = $1 AND customer_id = $2', [b.id, 'shared-customer']), 1);
      t.equal(await stored(live, 'organization_id = $1 AND customer_id = $2', [a.id, 'shared-customer']), 4);
    });

    await t.test('a retried transaction id is a replay; other values are 409', async (t) => {
      const body = { amount: 55.5, customer_id: 'retry-customer', merchant_id: 'retry-merchant', transaction_id: 'order-77' };
      const first = await live.score(a, body);
      t.equal(first.statusCode, 200);
      t.notOk(first.headers['idempotent-replayed']);
      // A new answer says where its server time went: the phases in order, then their total, which
      // is at least their sum (each phase is rounded to the microsecond) and the score's own
      // latency (its stages, timed from inside the scorer).
      const timing = String(first.headers['server-timing'])
        .split(', ')
        .map((p) => p.split(';dur='));
      t.same(
        timing.map(([name]) => name),
        ['auth', 'validate', 'prepare', 'score', 'serialize', 'commit', 'total'],
        'Server-Timing names the phases',
      );
      const ms = timing.map(([, d]) => Number(d));
      const total = ms.pop()!;
      t.ok(ms.every((d) => d >= 0) && total >= ms.reduce((a, d) => a + d, 0) - 0.01, `the phases add up to the total: ${first.headers['server-timing']}`);
      t.ok(first.json().latency_ms > 0 && first.json().latency_ms <= total, `the score's own latency ${first.json().latency_ms} ms is within the total`);
      const replay = await live.score(a, { ...body, location: 'Porto', mode: 'high_recall' });
      t.equal(replay.statusCode, 200);
      t.equal(replay.headers['idempotent-replayed'], 'true');
      t.equal(replay.headers['server-timing'], undefined, 'a replay scores nothing: no timing');
      t.equal(replay.body, first.body, 'byte for byte the first answer');
      await live.s.service.decisionLog.flush();
      const fromDb = await live.score(a, body);
      t.equal(fromDb.body, first.body, 'also once stored');
      t.equal(await stored(live, 'organization_id = $1 AND transaction_id = $2', [a.id, 'order-77']), 1, 'recorded once');
      for (const change of [{ amount: 55.51 }, { customer_id: 'someone-else' }, { merchant_id: 'elsewhere' }]) {
        const res = await live.score(a, { ...body, ...change });
        t.equal(res.statusCode, 409, JSON.stringify(change));
        t.equal(res.json().detail.reason, 'duplicate_transaction');
        t.match(res.json().detail.fix, /same amount, customer_id and merchant_id/);
      }
      t.equal((await live.score(b, body)).headers['idempotent-replayed'], undefined, 'another organization may use the same id');
      t.equal(await stored(live, 'transaction_id = $1', ['order-77']), 2);
    });

    await t.test('six concurrent copies of one id record one transaction', async (t) => {
      const body = { amount: 12, customer_id: 'burst-customer', merchant_id: 'burst-merchant', transaction_id: 'burst-1' };
      const org = await live.organization('Burst');
      const answers = await Promise.all(Array.from({ length: 6 }, () => live.score(org, body)));
      t.same(
        answers.map((r) => r.statusCode),
        [200, 200, 200, 200, 200, 200],
      );
      t.equal(answers.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 5, 'one scored, five replayed');
      t.equal(new Set(answers.map((r) => r.body)).size, 1, 'all the same body');
      t.equal(await stored(live, 'organization_id = $1', [org.id]), 1);
      const tenant = await live.s.service.tenants.get(org.id);
      t.equal(tenant.history.size, 1, 'one transaction in the history');
    });

    await t.test('the database refuses a second row with an id the organization has', async (t) => {
      await t.rejects(
        live.s.service.db.query(
          `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source) VALUES ($1, 'order-77', 0, 1, 'c', 'm', 'l', 'p', 'scored')`,
          [a.id],
        ),
      );
    });

    await t.test("an import's rows: the tenant in use keeps answering, and holds them once they stop arriving", async (t) => {
      const { tenants, tail } = live.s.service;
      const customer = 'import-customer';
      const body = (n: number) => ({ amount: 12, customer_id: customer, merchant_id: 'import-merchant', transaction_id: `after-import-${n}` });
      t.equal((await live.score(b, body(0))).json().entity_history[customer].prior_transactions, 0);
      const before = tenants.loadedNow(b.id);
      t.ok(before, "Bolt's tenant is loaded");
      // Another process's import (rows older than what the tenant holds), a chunk at a time.
      const now = Date.now();
      const data = organizationData(live.s.service.db, b.id).transactions;
      for (let chunk = 0; chunk < 3; chunk++) {
        await data.insert([0, 1].map((k) => importedRow(`imported-${chunk}-${k}`, now - 86_400_000 + chunk * 1000 + k, customer, 'import-merchant')));
        await tail.catchUp();
        t.equal(tenants.loadedNow(b.id), before, `chunk ${chunk}: the same tenant answers (no score waits for a load)`);
      }
      const during = (await live.score(b, body(1))).json();
      t.equal(during.entity_history[customer].prior_transactions, 1, 'it does not hold the imported rows yet');
      // Once they stop arriving (a second), it is built again beside the one answering.
      const deadline = Date.now() + 20_000;
      while (tenants.loadedNow(b.id) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      t.not(tenants.loadedNow(b.id), before, 'a new tenant took its place');
      const after = (await live.score(b, body(2))).json();
      t.equal(after.entity_history[customer].prior_transactions, 2 + 6, 'which holds the six imported rows, and the two scored');
    });

    /** An import this process runs into Bolt (`holdRebuilds`) of `name`'s customer at `name`'s
     *  merchant, whose tenant a score loaded first: `chunk(k)` stores its k-th chunk (one row, a
     *  day ago) and lets the tail carry it; `prior(n)` scores the customer's n-th payment after. */
    const heldImport = async (t: Test, name: string) => {
      const { tenants, tail } = live.s.service;
      const customer = `${name}-customer`;
      const body = (n: number) => ({ amount: 12, customer_id: customer, merchant_id: `${name}-merchant`, transaction_id: `after-${name}-${n}` });
      const prior = async (n: number): Promise<number> => (await live.score(b, body(n))).json().entity_history[customer].prior_transactions;
      t.equal(await prior(0), 0);
      const before = tenants.loadedNow(b.id);
      const release = tenants.holdRebuilds(b.id);
      const data = organizationData(live.s.service.db, b.id).transactions;
      const now = Date.now();
      const chunk = async (k: number) => {
        await data.insert([importedRow(`${name}-${k}`, now - 86_400_000 + k * 1000, customer, `${name}-merchant`)]);
        await tail.catchUp();
      };
      return { tenants, before, release, chunk, prior };
    };

    await t.test("this process's own import: no rebuild between its chunks, however far apart; one once it ends", async (t) => {
      const { tenants, before, release, chunk, prior } = await heldImport(t, 'held');
      for (let k = 0; k < 2; k++) {
        await chunk(k);
        // Well past the second without rows after which another process's import is rebuilt for.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        t.equal(tenants.loadedNow(b.id), before, `chunk ${k}, 2.5 s on: the same tenant, not built again`);
      }
      release();
      const deadline = Date.now() + 20_000;
      while (tenants.loadedNow(b.id) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      t.not(tenants.loadedNow(b.id), before, 'released: built again');
      t.equal(await prior(1), 1 + 2, 'holding both imported rows, and the one scored');
    });

    await t.test("this process's own import rebuilt for before its end (as the job asks once its rows are stored): no second rebuild at its end", async (t) => {
      const { tenants, before, release, chunk, prior } = await heldImport(t, 'asked');
      for (let k = 0; k < 2; k++) await chunk(k);
      await tenants.rebuild(b.id);
      const rebuilt = tenants.loadedNow(b.id);
      t.not(rebuilt, before, 'built again when asked');
      release();
      // Well past the second without rows after which rows that arrived are rebuilt for.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await tenants.rebuilt(b.id);
      t.equal(tenants.loadedNow(b.id), rebuilt, 'released: not built again, the rebuild had read every row');
      t.equal(await prior(1), 1 + 2, 'holding both imported rows, and the one scored');
    });

    await t.test('scored transactions and their decisions survive a restart', async (t) => {
      const body = { amount: 77.7, customer_id: 'restart-customer', merchant_id: 'restart-merchant', transaction_id: 'survivor' };
      const first = await live.score(a, body);
      t.equal(first.statusCode, 200);
      const size = (await live.s.service.tenants.get(a.id)).history.size;
      live = await service.restart();
      const replay = await live.score(a, body);
      t.equal(replay.headers['idempotent-replayed'], 'true', 'the id is still known');
      t.equal(replay.body, first.body);
      t.equal((await live.s.service.tenants.get(a.id)).history.size, size, 'same history after restart');
      const again = (await live.score(a, { amount: 5, customer_id: 'restart-customer', merchant_id: 'restart-merchant' })).json();
      t.equal(again.entity_history['restart-customer'].prior_transactions, 1, 'the restarted server knows the earlier payment');
      t.equal(again.graph_evidence['restart-customer'][0].transaction_id, 'survivor');
    });
  });
}
