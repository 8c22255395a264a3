// Data protection over real HTTP on each storage back end, with signed sign-ins and API keys:
// - retention: every member reads the period (400 days by default); owners change it within 30 to
//   3,650 days (422 outside, 403 for an analyst), audited;
// - export: an owner gets every record naming a customer (transactions with outcomes, list entries,
//   cases, totals and first uses) in one document; an analyst 403, another organization 404;
// - erasure: the organization's server asks with its key (keep_lists exempting one list), it is
//   202 pending and then done, listed with what it erased and kept and the customer only as its
//   keyed hash; afterwards no table holds the customer's id for the organization (but the exempted
//   list entry), no answer names it, and the features of the organization equal, to the last
//   rounding, those of a twin organization that was never sent the customer's payments;
// - isolation: the same customer id in another organization keeps every record.

import { createHmac } from 'node:crypto';
import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Member, type Organization } from '../support/accounts.ts';

const GONE = 'cust-erase-7Q';
const MINUTE = 60_000;

for (const backend of backends()) {
  t.test(`data protection on ${backend.name}`, async (t) => {
    let now = Date.UTC(2026, 10, 2, 9);
    const { live } = await liveFor(t, backend, {}, { dataProtection: { everyMs: 3_600_000 } }, () => now);
    const { app, service } = live.s;
    const acme = await live.organization('Acme');
    const twin = await live.organization('Twin');
    const other = await live.organization('Other');

    type Who = Member | Organization;
    const headers = (who: Who) => ('key' in who ? { authorization: `Bearer ${who.key}` } : who.headers);
    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, who: Who, payload?: unknown) =>
      app.inject({ method, url, headers: headers(who), ...(payload === undefined ? {} : { payload: payload as object }) });
    const score = async (org: Organization, body: Record<string, unknown>) => {
      const res = await live.score(org, body);
      if (res.statusCode !== 200) throw new Error(`score: ${res.body}`);
      return res.json();
    };

    // The same payments to Acme and its twin, at the same times, except the erased customer's, which
    // Acme alone is sent; and the erased customer's id at Other too.
    const merchants = ['m-1', 'm-2', 'm-3'];
    for (let i = 0; i < 60; i++) {
      now += 7 * MINUTE;
      const customer = i % 3 === 0 ? GONE : `c-${i % 7}`;
      const body = {
        transaction_id: `tx-${i}`,
        amount: 20 + ((i * 37) % 400) + 0.35,
        customer_id: customer,
        merchant_id: merchants[i % 3],
        location: i % 2 ? 'DE' : 'FR',
        payment_type: 'card',
      };
      await score(acme, body);
      if (customer !== GONE) await score(twin, body);
      if (i % 10 === 0) await score(other, { ...body, transaction_id: `other-${i}` });
    }
    const gone = (await call('GET', `/api/v1/transactions?customer_id=${GONE}&limit=100`, acme)).json().data;
    t.equal(gone.length, 20, "the customer's 20 payments are recorded");
    t.equal((await call('POST', `/api/v1/transactions/${gone[0].transaction_id}/outcome`, acme, { outcome: 'fraud' })).statusCode, 200);
    // A list of customers blocked, one kept for fraud prevention, and a case about the customer.
    for (const name of ['blocked', 'fraud_ring']) {
      t.equal((await call('POST', `/api/organizations/${acme.id}/lists`, acme.owner, { name, kind: 'customer_id' })).statusCode, 201);
      t.equal((await call('POST', `/api/v1/lists/${name}/items`, acme, { values: [GONE, 'c-1'], reason: 'chargeback' })).statusCode, 200);
    }
    const inbox = await call('POST', `/api/organizations/${acme.id}/inboxes`, acme.owner, { name: 'Everything', sla_hours: 24, members: [acme.owner.userId] });
    t.equal(inbox.statusCode, 201, inbox.body);
    const opened = await call('POST', '/api/v1/cases', acme, { transaction_id: gone[1].transaction_id, reason: `dispute by ${GONE}` });
    t.equal(opened.statusCode, 201, opened.body);
    t.equal((await call('POST', `/api/organizations/${acme.id}/members`, acme.owner, { email: 'ana@example.com', role: 'analyst' })).statusCode, 201);
    const ana = await live.signInWith({ sub: 'ana', email: 'ana@example.com' });

    await t.test('retention: read by members, changed by owners within its bounds, audited', async (t) => {
      const read = await call('GET', `/api/organizations/${acme.id}/retention`, ana);
      t.equal(read.statusCode, 200, read.body);
      t.match(read.json(), { days: 400, default_days: 400, minimum_days: 30, maximum_days: 3650, last_sweep: null });
      t.equal((await call('PUT', `/api/organizations/${acme.id}/retention`, ana, { days: 90 })).json().detail.reason, 'forbidden', 'an analyst cannot');
      for (const days of [29, 3651, 90.5]) {
        const res = await call('PUT', `/api/organizations/${acme.id}/retention`, acme.owner, { days });
        t.equal(res.statusCode, 422, `${days} days`);
        t.equal(res.json().detail.reason, 'validation_failed');
      }
      const set = await call('PUT', `/api/organizations/${acme.id}/retention`, acme.owner, { days: 120 });
      t.equal(set.statusCode, 200, set.body);
      t.equal(set.json().days, 120);
      t.equal((await call('GET', `/api/organizations/${acme.id}/retention`, other.owner)).statusCode, 404, 'another organization: not found');
      for (const url of ['retention', `customers/${GONE}/export`, 'erasures', 'data-protection/audit'])
        t.equal((await app.inject({ url: `/api/organizations/${acme.id}/${url}` })).statusCode, 401, `a guest: ${url} is 401`);
      const audit = (await call('GET', `/api/organizations/${acme.id}/data-protection/audit`, acme.owner)).json();
      t.match(audit.data[0], { by: acme.owner.userId, action: 'retention_changed', detail: { days: 120, previous_days: 400 } });
    });

    await t.test('export: every record naming the customer, for owners only', async (t) => {
      t.equal((await call('GET', `/api/organizations/${acme.id}/customers/${GONE}/export`, ana)).statusCode, 403, 'not for an analyst');
      t.equal((await call('GET', `/api/organizations/${acme.id}/customers/${GONE}/export`, other.owner)).statusCode, 404, 'nor another organization');
      const res = await call('GET', `/api/organizations/${acme.id}/customers/${GONE}/export`, acme.owner);
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      const doc = res.json();
      t.equal(doc.customer_id, GONE);
      t.same(
        doc.transactions.map((x: { transaction_id: string }) => x.transaction_id),
        gone.map((x: { transaction_id: string }) => x.transaction_id).reverse(),
        'every transaction, oldest first',
      );
      t.match(
        doc.transactions.find((x: { transaction_id: string }) => x.transaction_id === gone[0].transaction_id),
        { outcome: { outcome: 'fraud' } },
        'with its outcome',
      );
      t.same(doc.lists.map((l: { list: string }) => l.list).sort(), ['blocked', 'fraud_ring'], 'its list entries');
      t.equal(doc.cases.length, 1, 'the case about it');
      t.match(doc.totals, { transactions: 20, frauds: 1 });
      t.ok(
        doc.uses.some((u: { kind: string; key: string }) => u.kind === 'merchant' && u.key === 'm-1'),
        'its first uses',
      );
      const audit = (await call('GET', `/api/organizations/${acme.id}/data-protection/audit`, acme.owner)).json();
      t.equal(audit.data[0].action, 'customer_exported');
      t.notOk(JSON.stringify(audit).includes(GONE), 'the audit names the customer only by its hash');
    });

    // A payment scored at the same time in Acme and its twin: the same features make the same score.
    const probe = async (id: string) => {
      now += MINUTE;
      const body = { transaction_id: id, amount: 120.35, customer_id: 'c-probe', merchant_id: 'm-1', location: 'FR', payment_type: 'card' };
      return [(await score(acme, body)).risk_score as number, (await score(twin, body)).risk_score as number];
    };
    const [before, twinBefore] = await probe('probe-1');
    t.not(before, twinBefore, "before the erasure, the customer's payments weigh on Acme's score");

    await t.test('erasure: asked by the key, done within seconds, listed by its hash', async (t) => {
      const unknown = await call('POST', `/api/v1/customers/${GONE}/erasure`, acme, { keep_lists: ['no_such_list'] });
      t.equal(unknown.statusCode, 404);
      t.match(unknown.json().detail, { reason: 'not_found', message: /no_such_list/, fix: /lists/ });
      const asked = await call('POST', `/api/v1/customers/${GONE}/erasure`, acme, { keep_lists: ['fraud_ring'] });
      t.equal(asked.statusCode, 202, asked.body);
      t.match(asked.json(), { id: /^er_/, status: 'pending' });
      let listed: { status: string } & Record<string, unknown> = { status: 'pending' };
      for (let i = 0; i < 100 && listed.status !== 'done'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        listed = (await call('GET', `/api/organizations/${acme.id}/erasures`, acme.owner)).json().data[0];
      }
      t.match(listed, {
        id: asked.json().id,
        status: 'done',
        requested_by: `key:${acme.keyId}`,
        customer_hash: createHmac('sha256', 'z'.repeat(48)).update(`customer\n${acme.id}\n${GONE}`).digest('hex'),
        keep_lists: ['fraud_ring'],
        counts: { transactions: 20, outcome_changes: 1, list_items: 1, cases: 1, case_transactions: 0, audit_entries_redacted: 1 },
        kept: [{ list: 'fraud_ring', reason: 'chargeback' }],
      });
      t.equal((await call('GET', `/api/organizations/${acme.id}/erasures`, ana)).statusCode, 403, 'not for an analyst');
      t.same((await call('GET', `/api/organizations/${other.id}/erasures`, other.owner)).json().data, [], "not in another organization's list");
    });

    await t.test('afterwards, nothing of the customer is left but the exempted entry', async (t) => {
      // Every row of the organization, in every table, as text.
      const tables = (
        await service.db.query<{ table_name: string }>(
          `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'organization_id' ORDER BY 1`,
        )
      ).map((r) => r.table_name);
      const found: string[] = [];
      for (const table of tables) {
        const rows = await service.db.query<{ row: string }>(`SELECT t::text AS row FROM ${table} t WHERE organization_id = $1 AND strpos(t::text, $2) > 0`, [
          acme.id,
          GONE,
        ]);
        for (const r of rows) found.push(`${table}: ${r.row.slice(0, 120)}`);
      }
      t.same(
        found.map((f) => f.slice(0, f.indexOf(':'))),
        ['list_items', 'policy_audit'],
        `only the entry of the exempted list, and its audit: ${found.join('\n')}`,
      );
      t.ok(tables.includes('transactions') && tables.includes('case_timeline') && tables.includes('entity_totals'), `${tables.length} tables searched`);

      t.same((await call('GET', `/api/v1/transactions?customer_id=${GONE}`, acme)).json().data, [], 'no transaction listed');
      t.equal((await call('GET', `/api/v1/transactions/${gone[0].transaction_id}`, acme)).statusCode, 404, 'nor found by id');
      const doc = (await call('GET', `/api/organizations/${acme.id}/customers/${GONE}/export`, acme.owner)).json();
      t.match(doc, { transactions: [], cases: [], webhook_events: [], totals: null, uses: [] }, 'an export finds nothing');
      t.same(
        doc.lists.map((l: { list: string }) => l.list),
        ['fraud_ring'],
        'but the exempted list entry',
      );
      const entity = await call('GET', `/api/organizations/${acme.id}/entities/customer/${GONE}`, acme.owner);
      t.equal(entity.statusCode, 404, "the customer's summary is not found");
      const merchant = (await call('GET', `/api/organizations/${acme.id}/entities/merchant/m-1`, acme.owner)).json();
      t.notOk(JSON.stringify(merchant).includes(GONE), "a merchant's summary does not name it");
      // Other's payments of a customer with the same id keep every record.
      t.equal((await call('GET', `/api/v1/transactions?customer_id=${GONE}`, other)).json().data.length, 2, 'another organization keeps its own');
    });

    await t.test("the organization's features equal those of a history that never held the customer", async (t) => {
      await service.tail.catchUp();
      await service.tenants.rebuilt(acme.id);
      const [after, twinAfter] = await probe('probe-2');
      t.ok(Math.abs(after - twinAfter) <= 1e-9 * Math.max(1, Math.abs(twinAfter)), `Acme ${after} and its twin ${twinAfter}`);
      // And after a restart of the loading path, from the rows.
      service.tenants.forget(acme.id);
      service.tenants.forget(twin.id);
      const [fresh, twinFresh] = await probe('probe-3');
      t.ok(Math.abs(fresh - twinFresh) <= 1e-9 * Math.max(1, Math.abs(twinFresh)), `loaded afresh: Acme ${fresh} and its twin ${twinFresh}`);
    });
  });
}
