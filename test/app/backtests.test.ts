// Backtests end to end on each storage back end: a member runs a rule over the organization's
// logged decisions as a job and reads precision and recall that match a count of the stored
// outcomes; each transaction is evaluated with the lists as they were at its time; the decisions
// the rule would change, the per-day counts and the examples with the values read; a saved rule's
// draft compared with its live version in one report; the honest warnings; bad requests refused
// with nothing queued; another organization's members and guests never see the job.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of backends()) {
  t.test(`backtests on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
    const member = (org: Organization, method: Method, path: string, payload?: unknown) =>
      app.inject({
        method,
        url: `/api/organizations/${org.id}${path}`,
        headers: org.owner.headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const key = (org: Organization, method: Method, url: string, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${org.key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
    const finished = async (org: Organization, jobId: string) => {
      for (let k = 0; k < 400; k++) {
        const job = (await app.inject({ url: `/api/jobs/${jobId}`, headers: org.owner.headers })).json();
        if (job.status === 'succeeded' || job.status === 'failed') return job;
        await sleep(25);
      }
      throw new Error(`job ${jobId} did not finish`);
    };
    const backtest = async (org: Organization, body: unknown) => {
      const res = await member(org, 'POST', '/rules/backtests', body);
      if (res.statusCode !== 202) throw new Error(res.body);
      const job = await finished(org, res.json().id);
      t.equal(job.status, 'succeeded', job.error ?? '');
      t.equal(job.kind, 'backtest');
      return job.summary;
    };

    // Forty payments by four customers; c-1's and c-3's turn out to be fraud, some of the others
    // legitimate, the rest unknown.
    await member(a, 'POST', '/lists', { name: 'watch', kind: 'customer_id' });
    const scored: { id: string; customer: string; amount: number; decision: string }[] = [];
    for (let k = 0; k < 40; k++) {
      const customer = `c-${k % 4}`;
      // c-2 joins the watch list half way through: only its later payments match as of their time.
      if (k === 20) t.equal((await member(a, 'POST', '/lists/watch/items', { values: ['c-2'] })).statusCode, 200);
      const res = (
        await live.score(a, {
          transaction_id: `t-${k}`,
          amount: 10 + k,
          customer_id: customer,
          merchant_id: `m-${k % 3}`,
          location: 'Lisbon',
          payment_type: 'card',
        })
      ).json();
      scored.push({ id: `t-${k}`, customer, amount: 10 + k, decision: res.decision });
    }
    const outcomes = scored.flatMap((s, k) =>
      s.customer === 'c-1' || s.customer === 'c-3'
        ? [{ transaction_id: s.id, outcome: 'fraud' }]
        : k % 3 === 0
          ? [{ transaction_id: s.id, outcome: 'legit' }]
          : [],
    );
    t.equal((await key(a, 'POST', '/api/v1/outcomes', { outcomes })).statusCode, 200);

    await t.test('precision and recall match a count of the stored outcomes', async (t) => {
      const report = await backtest(a, { expression: 'customer_id == "c-1" || amount >= 45.0', action: 'block' });
      // The same count, from the decision log itself.
      const all = [];
      for (let after: string | undefined; ; ) {
        const page = (await member(a, 'GET', `/transactions?limit=100${after ? `&starting_after=${after}` : ''}`)).json();
        all.push(...page.data);
        if (!page.has_more) break;
        after = page.data[page.data.length - 1].transaction_id;
      }
      const matched = all.filter((r) => r.customer_id === 'c-1' || r.amount >= 45);
      const fraud = matched.filter((r) => r.outcome?.outcome === 'fraud').length;
      const legit = matched.filter((r) => r.outcome?.outcome === 'legit').length;
      const reported = all.filter((r) => r.outcome?.outcome === 'fraud').length;
      t.equal(report.scanned, 40);
      t.equal(report.matched, matched.length);
      t.same(report.outcomes, { fraud, legit, unknown: matched.length - fraud - legit });
      t.equal(report.precision, fraud / (fraud + legit), 'precision: fraud among the matched with an outcome');
      t.equal(report.recall, fraud / reported, 'recall: of all fraud reported in the period');
      t.equal(report.reported_fraud, reported);
      t.equal(
        report.fraud_amount,
        matched.filter((r) => r.outcome?.outcome === 'fraud').reduce((s, r) => s + r.amount, 0),
      );
      const changes: Record<string, number> = {};
      for (const r of matched) if (r.decision !== 'block') changes[`${r.decision}->block`] = (changes[`${r.decision}->block`] ?? 0) + 1;
      t.same(report.changes, changes, 'decisions it would change');
      t.equal(
        report.per_day.reduce((s: number, d: { matched: number }) => s + d.matched, 0),
        matched.length,
        'per day adds up',
      );
      t.ok(report.examples.fraud.length > 0 && report.examples.fraud.length <= 10);
      t.match(report.examples.fraud[0], { transaction_id: String, decision: String, would_be: 'block', values: { customer_id: String, amount: Number } });
      t.same(Object.keys(report.examples.fraud[0].values).sort(), ['amount', 'customer_id'], 'the values the rule read, and only those');
      t.same(report.rule, { rule_id: null, version: null, expression: 'customer_id == "c-1" || amount >= 45.0', action: 'block' });
      t.equal(report.compare, null);
      t.ok(Array.isArray(report.warnings));
    });

    await t.test('each transaction sees the lists as they were at its time', async (t) => {
      const report = await backtest(a, { expression: 'in_list("watch", customer_id)', action: 'review' });
      const later = scored.filter((s, k) => s.customer === 'c-2' && k >= 20).length;
      t.equal(report.matched, later, "c-2's payments after it joined the list, not before");
      t.ok(later > 0 && later < scored.filter((s) => s.customer === 'c-2').length);
    });

    await t.test('a draft compared with the live version in one report', async (t) => {
      const rule = (await member(a, 'POST', '/rules', { name: 'Big', expression: 'amount >= 40.0', action: 'block', status: 'active' })).json();
      await member(a, 'PUT', `/rules/${rule.id}`, { expression: 'amount >= 30.0', status: 'draft' });
      const report = await backtest(a, { rule_id: rule.id });
      t.match(report.rule, { rule_id: rule.id, version: 2, expression: 'amount >= 30.0' });
      t.match(report.compare, { rule: { rule_id: rule.id, version: 1, expression: 'amount >= 40.0' } });
      t.equal(report.matched, scored.filter((s) => s.amount >= 30).length);
      t.equal(report.compare.matched, scored.filter((s) => s.amount >= 40).length);
      const v1 = await backtest(a, { rule_id: rule.id, version: 1 });
      t.equal(v1.compare, null, 'the live version tested: nothing to compare');
    });

    await t.test('an allow rule is warned about what blocked payments hide', async (t) => {
      await member(a, 'POST', '/rules', { name: 'Block c-0', expression: 'customer_id == "c-0"', action: 'block', status: 'active' });
      await live.score(a, { transaction_id: 't-blocked', amount: 12, customer_id: 'c-0', merchant_id: 'm-0', location: 'Lisbon', payment_type: 'card' });
      const report = await backtest(a, { expression: 'customer_id == "c-0"', action: 'allow' });
      t.ok(
        report.warnings.some((w: string) => /blocked when they were decided/.test(w)),
        report.warnings.join(' | '),
      );
      t.ok(
        report.warnings.some((w: string) => /Outcomes arrive late/.test(w)),
        'recent matches without an outcome',
      );
      // The model may block some of c-0's earlier payments too (its features include the hour).
      const blocked = (await member(a, 'GET', '/transactions?customer_id=c-0&decision=block&limit=100')).json().data.length;
      t.ok(blocked >= 1, 'the rule blocked t-blocked');
      t.equal(report.changes['block->approve'], blocked, 'every blocked payment would have been approved');
    });

    await t.test('bad requests are refused with nothing queued; other organizations never see the job', async (t) => {
      const jobsBefore = (await app.inject({ url: `/api/jobs?organization_id=${a.id}`, headers: a.owner.headers })).json().jobs.length;
      const invalid = await member(a, 'POST', '/rules/backtests', { expression: 'amount >', action: 'block' });
      t.equal(invalid.statusCode, 422);
      t.equal(invalid.json().detail.reason, 'invalid_rule');
      t.equal((await member(a, 'POST', '/rules/backtests', { rule_id: 'rule_nope' })).statusCode, 404);
      t.equal(
        (await member(a, 'POST', '/rules/backtests', { expression: 'amount > 1.0', action: 'block', from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }))
          .statusCode,
        422,
      );
      t.equal((await app.inject({ url: `/api/jobs?organization_id=${a.id}`, headers: a.owner.headers })).json().jobs.length, jobsBefore, 'nothing queued');
      const res = await member(a, 'POST', '/rules/backtests', { expression: 'amount > 1.0', action: 'block' });
      const id = res.json().id;
      await finished(a, id);
      t.equal((await app.inject({ url: `/api/jobs/${id}`, headers: b.owner.headers })).statusCode, 404, "another organization's member: 404");
      t.equal((await app.inject({ url: `/api/jobs/${id}` })).statusCode, 404, 'a guest: 404');
      t.equal(
        (
          await app.inject({
            method: 'POST',
            url: `/api/organizations/${a.id}/rules/backtests`,
            headers: b.owner.headers,
            payload: { expression: 'amount > 1.0', action: 'block' },
          })
        ).statusCode,
        404,
        'a non-member cannot queue one',
      );
      // B's own backtest reads B's decisions only (none).
      const empty = await backtest(b, { expression: 'amount > 1.0', action: 'block' });
      t.equal(empty.scanned, 0);
      t.equal(empty.precision, null);
    });
  });
}
