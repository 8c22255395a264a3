// The decision log and outcomes end to end on each storage back end: a recorded transaction read
// back by its key and by a member (and by nobody else); outcomes from a key, a member and in bulk,
// every change kept with who made it; an outcome moving later transactions' graph features and
// evidence in its own organization only; bad input refused with nothing changed; the listing's
// filters and cursor paging; and full batches of outcomes through the bulk endpoint.

import t from 'tap';
import { extractOne } from '../../src/domain/features/extract.ts';
import { GRAPH_FEATURES } from '../../src/domain/features/graph.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

const FRAUD_RATE = GRAPH_FEATURES.indexOf('merchant_known_fraud_rate');

for (const backend of backends()) {
  t.test(`decision log and outcomes on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app, service } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    const outsider = await live.signIn('outsider');
    const asKey = (org: Organization, method: 'GET' | 'POST', url: string, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${org.key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
    const asMember = (headers: Record<string, string>, method: 'GET' | 'POST', url: string, payload?: unknown) =>
      app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

    const scored = (
      await live.score(a, { amount: 120, customer_id: 'c-1', merchant_id: 'm-shop', location: 'Lisbon', payment_type: 'wallet', transaction_id: 'tx-1' })
    ).json();

    await t.test('the stored decision is read back by its key and its members only', async (t) => {
      const byKey = await asKey(a, 'GET', '/api/v1/transactions/tx-1');
      t.equal(byKey.statusCode, 200, byKey.body);
      const r = byKey.json();
      for (const f of ['risk_score', 'risk_band', 'decision', 'mode', 'model_id', 'model_version', 'path', 'channel_scores', 'reasons', 'latency_ms'])
        t.same(r[f], scored[f], `${f} as answered`);
      t.equal(r.amount, 120);
      t.equal(r.source, 'scored');
      t.equal(r.outcome, null);
      t.same(r.outcome_history, []);
      t.same(
        r.evidence,
        { entity_history: scored.entity_history, graph_evidence: scored.graph_evidence, related_ring: scored.related_ring },
        'the evidence as answered',
      );
      const byMember = await asMember(a.owner.headers, 'GET', `/api/organizations/${a.id}/transactions/tx-1`);
      t.same(byMember.json(), r, 'a member reads the same record');
      t.equal((await asKey(b, 'GET', '/api/v1/transactions/tx-1')).statusCode, 404, "another organization's key: 404");
      t.equal((await asMember(outsider.headers, 'GET', `/api/organizations/${a.id}/transactions/tx-1`)).statusCode, 404, 'a non-member: 404');
      t.equal((await asMember(b.owner.headers, 'GET', `/api/organizations/${b.id}/transactions/tx-1`)).statusCode, 404, "B's member asking B's log: not there");
      t.equal((await app.inject({ url: `/api/organizations/${a.id}/transactions/tx-1` })).statusCode, 401, 'a guest: 401');

      // The customer's page: A's member sees A's customer; nobody else sees it.
      const entity = await asMember(a.owner.headers, 'GET', `/api/organizations/${a.id}/entities/customer/c-1`);
      t.equal(entity.statusCode, 200, entity.body);
      t.match(entity.json(), {
        role: 'customer',
        id: 'c-1',
        totals: { transactions: 1, amount_sum: 120 },
        counterparties: [{ role: 'merchant', id: 'm-shop', transactions: 1 }],
      });
      t.equal((await asMember(outsider.headers, 'GET', `/api/organizations/${a.id}/entities/customer/c-1`)).statusCode, 404, 'a non-member: 404');
      t.equal((await asMember(b.owner.headers, 'GET', `/api/organizations/${b.id}/entities/customer/c-1`)).statusCode, 404, 'B has no customer c-1');
      t.equal((await app.inject({ url: `/api/organizations/${a.id}/entities/customer/c-1` })).statusCode, 401, 'a guest: 401');
    });

    await t.test("an outcome joins the organization's history at reported_at, in that organization only", async (t) => {
      // Both organizations know the same merchant id; A's earlier payment there turns out to be fraud.
      await live.score(b, { amount: 30, customer_id: 'c-b', merchant_id: 'm-shop', transaction_id: 'b-tx' });
      const tenantA = await service.tenants.get(a.id);
      const tenantB = await service.tenants.get(b.id);
      const probe = { amount: 50, customer_id: 'c-2', merchant_id: 'm-shop', location: 'Lisbon', payment_type: 'wallet', time: Date.now() + 60_000 };
      const rateA = extractOne(probe, tenantA.history).graph[FRAUD_RATE]!;
      const rateB = extractOne(probe, tenantB.history).graph[FRAUD_RATE]!;
      const res = await asKey(a, 'POST', '/api/v1/transactions/tx-1/outcome', { outcome: 'fraud', source: 'chargeback' });
      t.equal(res.statusCode, 200, res.body);
      const r = res.json();
      t.same(r.outcome, { outcome: 'fraud', source: 'chargeback', reported_at: r.outcome.reported_at, reported_by: `key:${a.keyId}` });
      t.ok(Math.abs(Date.parse(r.outcome.reported_at) - Date.now()) < 60_000, 'reported_at defaults to now');
      t.ok(extractOne(probe, tenantA.history).graph[FRAUD_RATE]! > rateA, "A's merchant_known_fraud_rate rises");
      t.equal(extractOne(probe, tenantB.history).graph[FRAUD_RATE]!, rateB, "B's does not move");
      const later = (
        await live.score(a, { amount: 60, customer_id: 'c-3', merchant_id: 'm-shop', location: 'Lisbon', payment_type: 'wallet', transaction_id: 'tx-2' })
      ).json();
      const evidence = later.graph_evidence['m-shop'] as { transaction_id: string; outcome: string }[];
      t.equal(evidence.find((e) => e.transaction_id === 'tx-1')?.outcome, 'fraud', "a later transaction's evidence shows the outcome");
      const inB = (await live.score(b, { amount: 60, customer_id: 'c-b2', merchant_id: 'm-shop', transaction_id: 'b-tx-2' })).json();
      const inBEvidence = Object.values(inB.graph_evidence).flat() as { transaction_id: string; outcome: string }[];
      t.same([...new Set(inBEvidence.map((e) => `${e.transaction_id}:${e.outcome}`))], ['b-tx:unknown'], "B's evidence has only its own, unlabelled");
    });

    await t.test('changes are kept with who made them', async (t) => {
      const res = await asMember(a.owner.headers, 'POST', `/api/organizations/${a.id}/transactions/tx-1/outcome`, { outcome: 'legit', source: 'review' });
      t.equal(res.statusCode, 200, res.body);
      const r = res.json();
      t.equal(r.outcome.outcome, 'legit');
      t.equal(r.outcome.reported_by, a.owner.userId);
      t.same(
        r.outcome_history.map((c: { from: string | null; to: string; source: string; reported_by: string }) => [c.from, c.to, c.source, c.reported_by]),
        [
          [null, 'fraud', 'chargeback', `key:${a.keyId}`],
          ['fraud', 'legit', 'review', a.owner.userId],
        ],
      );
      const noCsrf = await app.inject({
        method: 'POST',
        url: `/api/organizations/${a.id}/transactions/tx-1/outcome`,
        headers: { cookie: a.owner.headers.cookie! },
        payload: { outcome: 'fraud' },
      });
      t.equal(noCsrf.statusCode, 403, 'a session without its CSRF token: 403');
      t.equal(
        (await asMember(outsider.headers, 'POST', `/api/organizations/${a.id}/transactions/tx-1/outcome`, { outcome: 'fraud' })).statusCode,
        404,
        'a non-member: 404',
      );
      const tenantA = await service.tenants.get(a.id);
      const probe = { amount: 50, customer_id: 'c-9', merchant_id: 'm-shop', location: 'Lisbon', payment_type: 'wallet', time: Date.now() + 60_000 };
      const labels = extractOne(probe, tenantA.history).graph;
      t.equal(labels[GRAPH_FEATURES.indexOf('merchant_known_labels')], 1, 'one label: the change replaced it');
      t.ok(labels[FRAUD_RATE]! < 0.02, 'and it is legitimate now');
    });

    await t.test('bad input: a clear 4xx, nothing changes', async (t) => {
      const before = (await asKey(a, 'GET', '/api/v1/transactions/tx-2')).json();
      const cases: [string, string, unknown, number, string][] = [
        ['unknown id', '/api/v1/transactions/nope/outcome', { outcome: 'fraud' }, 404, 'not_found'],
        ['not fraud or legit', '/api/v1/transactions/tx-2/outcome', { outcome: 'maybe' }, 422, 'validation_failed'],
        ['unknown source', '/api/v1/transactions/tx-2/outcome', { outcome: 'fraud', source: 'gut feeling' }, 422, 'validation_failed'],
        ['not a date', '/api/v1/transactions/tx-2/outcome', { outcome: 'fraud', reported_at: 'yesterday' }, 422, 'validation_failed'],
        [
          'in the future',
          '/api/v1/transactions/tx-2/outcome',
          { outcome: 'fraud', reported_at: new Date(Date.now() + 3_600_000).toISOString() },
          422,
          'validation_failed',
        ],
        ['before the transaction', '/api/v1/transactions/tx-2/outcome', { outcome: 'fraud', reported_at: '2020-01-01T00:00:00Z' }, 422, 'validation_failed'],
        ["another organization's transaction", '/api/v1/transactions/b-tx/outcome', { outcome: 'fraud' }, 404, 'not_found'],
      ];
      for (const [name, url, body, status, reason] of cases) {
        const res = await asKey(a, 'POST', url, body);
        t.equal(res.statusCode, status, `${name}: ${status}`);
        t.equal(res.json().detail.reason, reason, name);
        t.type(res.json().detail.fix, 'string');
      }
      t.same((await asKey(a, 'GET', '/api/v1/transactions/tx-2')).json(), before, 'the record is unchanged');
      t.equal((await asKey(b, 'GET', '/api/v1/transactions/b-tx')).json().outcome, null, "B's transaction is untouched");
      const bulk = await asKey(a, 'POST', '/api/v1/outcomes', { outcomes: Array.from({ length: 1001 }, () => ({ transaction_id: 'tx-2', outcome: 'fraud' })) });
      t.equal(bulk.statusCode, 422, 'more than 1,000 in one request: 422');
    });

    await t.test('bulk outcomes: a status for each, in order', async (t) => {
      const res = await asKey(a, 'POST', '/api/v1/outcomes', {
        outcomes: [
          { transaction_id: 'tx-2', outcome: 'fraud', source: 'customer_report' },
          { transaction_id: 'missing', outcome: 'fraud' },
          { transaction_id: 'tx-2', outcome: 'legit', reported_at: '2020-01-01T00:00:00Z' },
          { transaction_id: 'b-tx', outcome: 'fraud' },
        ],
      });
      t.equal(res.statusCode, 200, res.body);
      t.same(
        res.json().results.map((r: { status: string }) => r.status),
        ['applied', 'not_found', 'invalid', 'not_found'],
      );
      t.equal((await asKey(a, 'GET', '/api/v1/transactions/tx-2')).json().outcome.outcome, 'fraud');
    });

    await t.test('the listing: newest first, each filter, cursor paging, one organization', async (t) => {
      const org = await live.organization('Lister');
      for (let i = 0; i < 12; i++) {
        const r = await live.score(org, {
          amount: i % 3 === 0 ? 5000 + i : 10 + i,
          customer_id: i % 2 ? 'odd' : 'even',
          merchant_id: `m-${i % 4}`,
          transaction_id: `l-${String(i).padStart(2, '0')}`,
        });
        t.equal(r.statusCode, 200);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await asKey(org, 'POST', '/api/v1/outcomes', {
        outcomes: [
          { transaction_id: 'l-03', outcome: 'fraud' },
          { transaction_id: 'l-04', outcome: 'legit' },
        ],
      });
      const list = async (query: string) => {
        const res = await asMember(org.owner.headers, 'GET', `/api/organizations/${org.id}/transactions${query}`);
        t.equal(res.statusCode, 200, `${query}: ${res.body}`);
        return res.json() as {
          data: {
            transaction_id: string;
            decision: string;
            risk_band: string;
            customer_id: string;
            merchant_id: string;
            time: string;
            outcome: { outcome: string } | null;
          }[];
          has_more: boolean;
        };
      };
      const all = await list('');
      t.same(
        all.data.map((x) => x.transaction_id),
        Array.from({ length: 12 }, (_, i) => `l-${String(11 - i).padStart(2, '0')}`),
        'newest first',
      );
      t.equal(all.has_more, false);
      const pages: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await list(`?limit=5${after ? `&starting_after=${after}` : ''}`);
        pages.push(...page.data.map((x) => x.transaction_id));
        if (!page.has_more) break;
        after = page.data[page.data.length - 1]!.transaction_id;
      }
      t.same(
        pages,
        all.data.map((x) => x.transaction_id),
        'cursor paging walks the same list',
      );
      t.same(
        (await list('?customer_id=odd')).data.map((x) => x.customer_id),
        Array(6).fill('odd'),
      );
      t.same(
        (await list('?merchant_id=m-1')).data.map((x) => x.transaction_id),
        ['l-09', 'l-05', 'l-01'],
      );
      t.same(
        (await list('?outcome=fraud')).data.map((x) => x.transaction_id),
        ['l-03'],
      );
      t.same(
        (await list('?outcome=legit')).data.map((x) => x.transaction_id),
        ['l-04'],
      );
      t.equal((await list('?outcome=none')).data.length, 10);
      for (const decision of ['approve', 'review', 'block']) {
        const expected = all.data.filter((x) => x.decision === decision).map((x) => x.transaction_id);
        t.same(
          (await list(`?decision=${decision}`)).data.map((x) => x.transaction_id),
          expected,
          `decision=${decision}`,
        );
      }
      for (const band of ['low', 'medium', 'high', 'critical']) {
        t.same(
          (await list(`?risk_band=${band}`)).data.map((x) => x.transaction_id),
          all.data.filter((x) => x.risk_band === band).map((x) => x.transaction_id),
          `risk_band=${band}`,
        );
      }
      const middle = all.data[6]!.time;
      t.same(
        (await list(`?from=${encodeURIComponent(middle)}`)).data.map((x) => x.transaction_id),
        all.data.filter((x) => x.time >= middle).map((x) => x.transaction_id),
        'from is inclusive',
      );
      t.same(
        (await list(`?to=${encodeURIComponent(middle)}`)).data.map((x) => x.transaction_id),
        all.data.filter((x) => x.time < middle).map((x) => x.transaction_id),
        'to is exclusive',
      );
      t.equal(
        (await asMember(org.owner.headers, 'GET', `/api/organizations/${org.id}/transactions?starting_after=tx-1`)).statusCode,
        404,
        "a cursor from another organization's log: 404",
      );
      t.equal((await asMember(org.owner.headers, 'GET', `/api/organizations/${org.id}/transactions?limit=101`)).statusCode, 422);
      t.equal((await asMember(a.owner.headers, 'GET', `/api/organizations/${org.id}/transactions`)).statusCode, 404, 'a member of another organization: 404');
      t.notOk(
        (await list('')).data.some((x) => x.transaction_id.startsWith('tx-')),
        "none of Acme's",
      );
    });

    await t.test('full batches of a thousand outcomes through the bulk endpoint', async (t) => {
      const org = await live.organization('Volume');
      const now = Date.now();
      const rows: NewTransaction[] = Array.from({ length: 3_000 }, (_, i) => ({
        transaction_id: `v-${i}`,
        time: now - 86_400_000 + i,
        amount: 10 + (i % 50),
        customer_id: `vc-${i % 700}`,
        merchant_id: `vm-${i % 40}`,
        location: 'Porto',
        payment_type: 'card_present',
        source: 'import',
      }));
      await organizationData(service.db, org.id).transactions.insert(rows);
      const tenant = await service.tenants.get(org.id);
      t.equal(tenant.history.size, 3_000);
      const started = performance.now();
      for (let k = 0; k < 3; k++) {
        const res = await asKey(org, 'POST', '/api/v1/outcomes', {
          outcomes: rows
            .slice(k * 1000, (k + 1) * 1000)
            .map((r, i) => ({ transaction_id: r.transaction_id, outcome: i % 10 === 0 ? 'fraud' : 'legit', source: 'chargeback' })),
        });
        t.equal(res.statusCode, 200, res.statusCode === 200 ? '' : res.body);
        t.ok(
          res.json().results.every((r: { status: string }) => r.status === 'applied'),
          `batch ${k + 1}: all applied`,
        );
      }
      const seconds = (performance.now() - started) / 1000;
      t.comment(`3,000 outcomes in ${seconds.toFixed(2)} s on ${backend.name}`);
      const [counts] = await service.db.query<{ fraud: number; legit: number; changes: number }>(
        `SELECT count(*) FILTER (WHERE label = 1)::int AS fraud, count(*) FILTER (WHERE label = 0)::int AS legit,
                (SELECT count(*)::int FROM outcome_changes WHERE organization_id = $1) AS changes FROM transactions WHERE organization_id = $1`,
        [org.id],
      );
      t.same(counts, { fraud: 300, legit: 2700, changes: 3_000 });
      const probe = { amount: 20, customer_id: 'vc-new', merchant_id: 'vm-0', location: 'Porto', payment_type: 'card_present', time: Date.now() + 1000 };
      t.equal(extractOne(probe, tenant.history).graph[GRAPH_FEATURES.indexOf('merchant_known_labels')], 75, 'the live history has every label of the merchant');
    });
  });
}
