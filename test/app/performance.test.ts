// `GET /api/organizations/{id}/performance` on each storage back end, held to figures the test works
// out itself from the transactions it stored: per ISO week, volume, review and block rates, score
// quantiles; on the labelled ones, each mode's precision and recall and ROC AUC (by counting pairs);
// null where too few outcomes; drift of the features the transactions were scored with; another
// organization's traffic never counted.

import t from 'tap';
import { isoWeek, weekStart } from '../../src/app/decisions/performance.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { backends } from '../support/server.ts';
import { liveFor } from '../support/accounts.ts';

const WEEK = 7 * 86_400_000;

/** ROC AUC by counting (fraud, legit) pairs ranked right, ties counting half. */
function pairAuc(scores: number[], labels: number[]): number {
  let good = 0;
  let pairs = 0;
  scores.forEach((s, i) => {
    if (labels[i] !== 1) return;
    scores.forEach((u, j) => {
      if (labels[j] !== 0) return;
      pairs++;
      good += s > u ? 1 : s === u ? 0.5 : 0;
    });
  });
  return good / pairs;
}

t.test('ISO weeks', async (t) => {
  t.equal(isoWeek(weekStart(Date.UTC(2026, 10, 23))), '2026-W48');
  t.equal(isoWeek(weekStart(Date.UTC(2021, 0, 3))), '2020-W53', 'a Sunday early in January belongs to the last week of the year before');
  t.equal(isoWeek(weekStart(Date.UTC(2024, 11, 30))), '2025-W01');
  t.equal(new Date(weekStart(Date.UTC(2026, 10, 26, 15))).toISOString(), '2026-11-23T00:00:00.000Z', 'weeks start on Monday, UTC');
});

for (const backend of backends()) {
  t.test(`performance on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app, service } = live.s;
    const org = await live.organization('Perf');
    const other = await live.organization('Other');
    const model = (service.model as { file: { thresholds: Record<string, { review: number; block: number }> } }).file;
    const thisWeek = weekStart(Date.now());

    // Last week: 60 scored transactions, 40 of them labelled (every fourth fraud, scored high).
    // This week: 10 scored, 5 labelled (too few for rates). Two weeks ago: nothing.
    const rows: NewTransaction[] = [];
    const made = (i: number, week: number, score: number, decision: string) => ({
      transaction_id: `p-${week}-${i}`,
      time: thisWeek - week * WEEK + 3_600_000 + i * 1000,
      amount: 10,
      customer_id: `c${i}`,
      merchant_id: 'm',
      location: 'x',
      payment_type: 'wallet',
      source: 'scored' as const,
      decision: { risk_score: score, risk_band: 'low', decision, mode: 'balanced' },
    });
    const lastWeek: { score: number; label: number | null; decision: string }[] = [];
    for (let i = 0; i < 60; i++) {
      const fraud = i % 4 === 0;
      const score = fraud ? 0.3 + (i % 7) * 0.1 : 0.001 * (i % 13) + (i % 9 === 0 ? 0.5 : 0);
      const decision = score >= model.thresholds.balanced!.block ? 'block' : score >= model.thresholds.balanced!.review ? 'review' : 'approve';
      rows.push(made(i, 1, score, decision));
      lastWeek.push({ score, label: i < 40 ? (fraud ? 1 : 0) : null, decision });
    }
    for (let i = 0; i < 10; i++) rows.push(made(i, 0, 0.01 * i, 'approve'));
    await organizationData(service.db, org.id).transactions.insert(rows);
    await organizationData(service.db, other.id).transactions.insert(rows.map((r) => ({ ...r, decision: { ...r.decision!, decision: 'block' } })));
    const outcomes = [
      ...lastWeek.flatMap((x, i) => (x.label === null ? [] : [{ transaction_id: `p-1-${i}`, outcome: x.label === 1 ? 'fraud' : 'legit' }])),
      ...Array.from({ length: 5 }, (_, i) => ({ transaction_id: `p-0-${i}`, outcome: 'legit' })),
    ];
    const applied = await app.inject({ method: 'POST', url: '/api/v1/outcomes', headers: { authorization: `Bearer ${org.key}` }, payload: { outcomes } });
    t.equal(applied.statusCode, 200, applied.body);

    const res = await app.inject({ url: `/api/organizations/${org.id}/performance?weeks=3`, headers: org.owner.headers });
    t.equal(res.statusCode, 200, res.body);
    const report = res.json();
    t.same(
      report.weeks.map((w: { week: string }) => w.week),
      [isoWeek(thisWeek - 2 * WEEK), isoWeek(thisWeek - WEEK), isoWeek(thisWeek)],
      'three ISO weeks, oldest first',
    );
    const [empty, last, now] = report.weeks;
    t.equal(empty.transactions, 0);
    t.equal(empty.review_rate, null);
    t.equal(empty.score_quantiles, null);

    t.equal(last.transactions, 60);
    t.equal(last.review_rate, lastWeek.filter((x) => x.decision === 'review').length / 60);
    t.equal(last.block_rate, lastWeek.filter((x) => x.decision === 'block').length / 60, "this organization's decisions, not the other's");
    const sorted = lastWeek.map((x) => x.score).sort((a, b) => a - b);
    t.ok(Math.abs(last.score_quantiles.p50 - (sorted[29]! + sorted[30]!) / 2) < 1e-12, 'median score');
    t.equal(last.labelled, 40);
    const labelled = lastWeek.filter((x) => x.label !== null);
    const fraud = labelled.filter((x) => x.label === 1).length;
    t.equal(last.fraud, fraud);
    t.ok(
      Math.abs(
        last.roc_auc -
          pairAuc(
            labelled.map((x) => x.score),
            labelled.map((x) => x.label!),
          ),
      ) < 1e-12,
      'ROC AUC as counted by pairs',
    );
    t.ok(last.average_precision > 0 && last.average_precision <= 1);
    for (const [mode, th] of Object.entries(model.thresholds)) {
      const at = (threshold: number) => {
        const flagged = labelled.filter((x) => x.score >= threshold);
        const caught = flagged.filter((x) => x.label === 1).length;
        return { precision: flagged.length ? caught / flagged.length : null, recall: caught / fraud };
      };
      const block = at(th.block);
      const review = at(th.review);
      t.same(
        last.by_mode[mode],
        {
          review_threshold: th.review,
          block_threshold: th.block,
          precision: block.precision,
          recall: block.recall,
          review_precision: review.precision,
          review_recall: review.recall,
        },
        mode,
      );
    }

    t.equal(now.transactions, 10);
    t.equal(now.labelled, 5);
    t.equal(now.roc_auc, null, 'fewer than 20 labelled: null');
    t.equal(now.by_mode.balanced.precision, null);

    t.equal(
      (await app.inject({ url: `/api/organizations/${org.id}/performance`, headers: other.owner.headers })).statusCode,
      404,
      'a member of another organization: 404',
    );
    t.equal((await app.inject({ url: `/api/organizations/${org.id}/performance?weeks=0`, headers: org.owner.headers })).statusCode, 422);
    t.equal((await app.inject({ url: `/api/organizations/${org.id}/performance` })).statusCode, 401);
    const fresh = (await app.inject({ url: `/api/organizations/${org.id}/performance`, headers: org.owner.headers })).json();
    t.equal(fresh.weeks.length, 12, 'twelve weeks by default');
    t.equal(last.drift, null, 'inserted without the features they were scored with: no drift');
  });

  t.test(`drift on live traffic on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const org = await live.organization('Transfers');
    const other = await live.organization('Quiet');
    // Mobile-money transfers: payment types the model never saw, amounts far above its range.
    const types = ['TRANSFER', 'CASH_OUT', 'PAYMENT'];
    for (let i = 0; i < 240; i++) {
      const res = await live.score(org, {
        transaction_id: `d-${i}`,
        amount: 150_000 + 997 * i,
        customer_id: `C${i % 90}`,
        merchant_id: `M${i % 40}`,
        payment_type: types[i % 3],
        location: 'Nairobi',
      });
      t.equal(res.statusCode, 200, res.body);
    }
    await live.score(org, { transaction_id: 'd-0', amount: 150_000, customer_id: 'C0', merchant_id: 'M0', payment_type: 'TRANSFER', location: 'Nairobi' }); // a retry counts once
    const week = (id: string, headers: Record<string, string>) => app.inject({ url: `/api/organizations/${id}/performance?weeks=1`, headers });
    const res = await week(org.id, org.owner.headers);
    t.equal(res.statusCode, 200, res.body);
    const drift = res.json().weeks[0].drift;
    t.equal(drift.rows, 240, 'every scored transaction, once');
    t.equal(drift.verdict, 'shifted', 'no outcomes: the checks without them decide');
    t.same([...drift.unseen_categories.payment_type].sort(), [...types].sort());
    t.same(drift.unseen_categories.location, ['Nairobi']);
    t.ok(drift.reasons.includes('unseen_categories') && drift.reasons.includes('feature:amount'), drift.reasons.join(', '));
    t.equal(drift.basis, drift.reasons[0] === 'score_psi' ? 'scores' : 'categories', 'the first check that found a shift');
    t.equal(drift.measured, null);
    t.match(drift.warning, /these scores are outside what the model was validated on/);
    t.equal(drift.features.find((f: { feature: string }) => f.feature === 'amount').out_of_range_share, 1);

    // Outcomes reported on the week's transactions, fraud on the lowest scores and legitimate on the
    // highest: with 20 of each, they decide, and say the model fails on this traffic.
    const recorded = (
      await Promise.all(
        Array.from({ length: 240 }, (_, i) => app.inject({ url: `/api/v1/transactions/d-${i}`, headers: { authorization: `Bearer ${org.key}` } })),
      )
    ).map((r) => r.json());
    recorded.sort((a, b) => a.risk_score - b.risk_score);
    const outcomes = [
      ...recorded.slice(0, 25).map((r) => ({ transaction_id: r.transaction_id, outcome: 'fraud' })),
      ...recorded.slice(-25).map((r) => ({ transaction_id: r.transaction_id, outcome: 'legit' })),
    ];
    const reported = await app.inject({ method: 'POST', url: '/api/v1/outcomes', headers: { authorization: `Bearer ${org.key}` }, payload: { outcomes } });
    t.equal(reported.statusCode, 200, reported.body);
    const measured = (await week(org.id, org.owner.headers)).json().weeks[0].drift;
    t.equal(measured.verdict, 'degraded', JSON.stringify(measured.measured));
    t.equal(measured.basis, 'outcomes');
    t.same([measured.measured.fraud, measured.measured.legit], [25, 25]);
    t.ok(measured.reasons.includes('average_precision'));
    t.ok(measured.signals.includes('unseen_categories'), 'the shift is still listed');
    const quiet = (await week(other.id, other.owner.headers)).json().weeks[0];
    t.equal(quiet.transactions, 0);
    t.equal(quiet.drift, null, "another organization's traffic is not in its drift");
  });
}
