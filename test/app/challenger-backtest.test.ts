// The challengers' report's backtest over the imported span, over the service's HTTP API with real
// sign-in, the real addon and a real history import (upload, import, the features stage), on each
// storage back end:
// - a challenger of an organization that imported labelled history has a backtest, labelled as one,
//   over exactly its imported transactions older than the label delay (the count, the frauds, the
//   span and the amounts each model would block recounted here from the rows the test imported),
//   the younger ones left out, listed before the challenger has scored any live payment;
// - a challenger identical to the active model: no difference, every interval of a difference
//   holding 0, no decision changed; one that blocks everything: the same ranking, every decision
//   that was not a block changed to one, and all the fraud blocked;
// - the cap on rows: the most recent ones, how many, and that older ones were left out (a cap
//   reached exactly on a batch's edge too); compared in a worker thread, the same report;
// - another organization that imported other rows with the same ids, customers and span gets its
//   own rows only (the amounts its challenger would block recounted from its rows), and neither
//   sees the other's; an organization without imports gets
//   `backtest: null` beside its live comparison;
// - the OpenAPI reference documents the backtest beside the fields the report had;
// - a score from stored features is the score the service answered live (the cold-start floor too).

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type LiveService, type Organization } from '../support/accounts.ts';
import { insertCustomModel } from '../../src/storage/models-store.ts';
import { mergeSettings } from '../../src/model/custom.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { Rng } from '../../src/domain/rng.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { BACKTEST_BATCH_ROWS, BACKTEST_ROWS, challengerReport } from '../../src/app/decisions/challenger-report.ts';
import { shadowRecords, shadowRows } from '../support/shadow-rows.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const DAY = 86_400_000;
const base = loadModelFolder('models/builtin');
if (isProblem(base)) throw new Error(base.message);
/** The built-in model's settings as a custom model's: it scores and decides as the built-in one. */
const same = mergeSettings(base.file, {});
/** Blocks every payment, with the built-in ranking. */
const strict = mergeSettings(base.file, { thresholds: { balanced: { review: 0.000_001, block: 0.000_002 } } });

interface Imported {
  id: string;
  time: number;
  amount: number;
  customer: string;
  merchant: string;
  fraud: boolean;
}

/** `old` payments older than the label delay (from 70 to 9 days ago) and `young` ones younger
 *  than it (5 to 1 days ago), none near its edge; about one in ten a fraud, most at one merchant. */
function history(seed: number, old: number, young: number, now: number): Imported[] {
  const rng = new Rng(seed);
  const at = (from: number, to: number) => now - from + Math.floor(rng.uniform() * (from - to));
  return Array.from({ length: old + young }, (_, i) => {
    const bad = rng.uniform() < 0.15;
    return {
      id: `p-${i}`,
      time: i < old ? at(70 * DAY, 9 * DAY) : at(5 * DAY, 1 * DAY),
      amount: Math.round((5 + rng.uniform() * 400) * 100) / 100,
      customer: `c-${rng.below(120)}`,
      merchant: bad ? 'm-bad' : `m-${rng.below(20)}`,
      fraud: bad ? rng.uniform() < 0.5 : rng.uniform() < 0.02,
    };
  });
}

const sum = (rows: readonly Imported[]) => Math.round(rows.reduce((s, r) => s + r.amount, 0) * 100) / 100;
const close = (a: number, b: number) => Math.abs(a - b) < 1e-6;
const iso = (ms: number) => new Date(ms).toISOString();

for (const backend of backends()) {
  t.test(`challengers' backtest over the imported span on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app, service } = live.s;
    const labelDelay = service.labelDelay;
    t.equal(labelDelay, 7 * DAY, 'the history below is laid out around a label delay of 7 days');
    const now = Date.now();
    const acme = await live.organization('Acme');
    const bolt = await live.organization('Bolt');
    const cargo = await live.organization('Cargo');
    const model = (org: Organization, id: string, settings = same) =>
      insertCustomModel(service.db, { id, organizationId: org.id, name: id, baseModelId: base.file.id, settings });
    const as = (org: Organization, method: 'GET' | 'POST', url: string) => app.inject({ method, url, headers: org.owner.headers });
    const report = async (org: Organization, by: Organization = org) => {
      const res = await as(by, 'GET', `/api/organizations/${org.id}/challengers/report`);
      if (res.statusCode !== 200) throw new Error(`the report of ${org.id}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      return res.json();
    };
    const imported = await Promise.all([importHistory(t, live, acme, history(1, 2_450, 60, now)), importHistory(t, live, bolt, history(2, 300, 20, now))]);
    const [acmeRows, boltRows] = imported.map((rows) => rows.filter((r) => r.time < now - labelDelay));
    const acmeOld = acmeRows!.sort((a, b) => b.time - a.time);
    const boltOld = boltRows!.sort((a, b) => b.time - a.time);
    for (const [org, id, settings] of [
      [acme, 'cm_same', same],
      [acme, 'cm_strict', strict],
      [bolt, 'cm_bolt', strict],
      [cargo, 'cm_cargo', same],
    ] as const) {
      await model(org, id, settings);
      const made = await as(org, 'POST', `/api/models/${id}/challenger`);
      t.equal(made.statusCode, 200, made.body);
    }

    await t.test('a backtest over the imported transactions older than the label delay, labelled as one', async (t) => {
      const r = await report(acme);
      t.same(
        r.challengers.map((c: { model_id: string }) => c.model_id),
        ['cm_same', 'cm_strict'],
        'both challengers listed, though neither has scored a live payment',
      );
      const frauds = acmeOld.filter((x) => x.fraud);
      for (const c of r.challengers) {
        t.same([c.overall, c.weeks, c.active_model_ids], [null, [], []], `${c.model_id}: no live comparison yet`);
        const b = c.backtest;
        t.match(
          b,
          {
            kind: 'backtest',
            active_model_id: base.file.id,
            mode: 'balanced',
            row_limit: BACKTEST_ROWS,
            limited: false,
            transactions: acmeOld.length,
            from: iso(acmeOld.at(-1)!.time),
            to: iso(acmeOld[0]!.time),
            comparison: { transactions: acmeOld.length, frauds: frauds.length },
          },
          `${c.model_id}: ${acmeOld.length} imported transactions older than the label delay (of ${acmeOld.length + 60}), ${frauds.length} frauds`,
        );
        t.match(b.note, /backtest over imported history, not live traffic/, 'says what it is');
        t.match(b.note, /flatter/, 'and that it can flatter a model');
      }
      const [sameOne, strictOne] = r.challengers.map((c: { backtest: any }) => c.backtest.comparison);
      t.equal(sameOne.verdict, 'no_difference', 'the model identical to the active one: no difference');
      const differences = [
        sameOne.average_precision,
        sameOne.roc_auc,
        sameOne.card_precision_at_k,
        sameOne.calibration_error,
        sameOne.money.fraud_blocked,
        sameOne.money.legit_blocked,
      ].map((f) => f.difference);
      t.ok(
        differences.every((d: { low: number; high: number }) => d.low <= 0 && d.high >= 0),
        `every interval of a difference holds 0: ${JSON.stringify(differences)}`,
      );
      t.equal(sameOne.decisions_changed.count, 0, 'no decision changed');
      t.ok(sameOne.average_precision.active.value > frauds.length / acmeOld.length, 'the built-in model ranks the frauds better than chance');

      t.equal(strictOne.average_precision.difference.value, 0, 'the one that blocks everything ranks as the built-in model');
      t.ok(close(strictOne.money.fraud_blocked.challenger.value, sum(frauds)), 'and blocks all the fraud, recounted from the rows imported');
      t.ok(close(strictOne.money.legit_blocked.challenger.value, sum(acmeOld.filter((x) => !x.fraud))), 'and every legitimate payment');
      const blockedBefore = acmeOld.length - strictOne.decisions_changed.count;
      t.ok(
        Object.keys(strictOne.decisions_changed.by_change).every((k) => /^(approve|review)->block$/.test(k)),
        `every decision that was not a block became one (${blockedBefore} were blocks already)`,
      );
      t.ok(strictOne.decisions_changed.count > 0, 'some did change');
    });

    await t.test('the cap: the most recent transactions, how many, and whether older ones were left out', async (t) => {
      const deps = { db: service.db, labelDelay, scorer: service.scorer, scorerForModel: service.scorerForModel };
      for (const cap of [50, BACKTEST_BATCH_ROWS, acmeOld.length]) {
        const r = await challengerReport({ ...deps, backtestRows: cap }, acme.id, acme.owner.userId);
        const b = r.challengers[0]!.backtest!;
        const used = acmeOld.slice(0, cap);
        t.match(
          b,
          {
            transactions: used.length,
            row_limit: cap,
            limited: cap < acmeOld.length,
            from: iso(used.at(-1)!.time),
            to: iso(used[0]!.time),
            comparison: { transactions: used.length, frauds: used.filter((x) => x.fraud).length },
          },
          `at most ${cap}: the ${used.length} most recent`,
        );
      }
      t.ok(service.compare, "the service compares in its jobs' worker threads");
      const inline = await challengerReport(deps, acme.id, acme.owner.userId);
      t.same((await report(acme)).challengers, inline.challengers, 'to the same report as compared on the event loop');
    });

    await t.test("one organization's backtest never reads another's rows", async (t) => {
      const r = await report(bolt);
      t.same(
        r.challengers.map((c: { model_id: string }) => c.model_id),
        ['cm_bolt'],
        "Bolt's own challenger only",
      );
      const b = r.challengers[0].backtest;
      t.match(b, {
        transactions: boltOld.length,
        from: iso(boltOld.at(-1)!.time),
        to: iso(boltOld[0]!.time),
        comparison: { frauds: boltOld.filter((x) => x.fraud).length },
      });
      // It blocks every payment: the fraud it blocks is the sum of Bolt's frauds, recounted here.
      t.ok(close(b.comparison.money.fraud_blocked.challenger.value, sum(boltOld.filter((x) => x.fraud))), "the fraud blocked: Bolt's own");
      t.ok(close(b.comparison.money.legit_blocked.challenger.value, sum(boltOld.filter((x) => !x.fraud))), "the legitimate payments blocked: Bolt's own");
      t.equal((await as(bolt, 'GET', `/api/organizations/${acme.id}/challengers/report`)).statusCode, 404, "Acme's report is not found for Bolt");
      t.equal((await report(acme)).challengers[0].backtest.transactions, acmeOld.length, "Acme's counts no row of Bolt's");
    });

    await t.test('an organization without imports: backtest null beside its live comparison', async (t) => {
      const rows = shadowRows({ seed: 3, old: 60, now, labelDelay });
      await organizationData(service.db, cargo.id).transactions.insert(shadowRecords(rows, base.file.id, 'cm_cargo'));
      const r = await report(cargo);
      t.equal(r.challengers.length, 1);
      t.match(r.challengers[0], { model_id: 'cm_cargo', overall: { transactions: 60 }, backtest: null });
    });

    await t.test('the reference documents it as the answer validates it', async (t) => {
      const doc = (await app.inject({ url: '/api/docs/json' })).json();
      const answer = doc.paths['/api/organizations/{id}/challengers/report'].get.responses['200'].content['application/json'].schema;
      const backtest = answer.properties.challengers.items.properties.backtest;
      t.ok(JSON.stringify(backtest).includes('"backtest"'), 'a `kind` that says backtest');
      const fields = JSON.stringify(backtest);
      for (const field of ['active_model_id', 'from', 'to', 'transactions', 'row_limit', 'limited', 'comparison'])
        t.ok(fields.includes(`"${field}"`), `documents ${field}`);
      t.match(JSON.stringify(answer.properties.challengers.items.required), /overall.*weeks/, 'beside the fields it had');
    });

    await t.test('a score from stored features is the score answered live', async (t) => {
      const fresh = await live.organization('Fresh');
      const payments = [
        { transaction_id: 'f-1', amount: 12.5, customer_id: 'fc-1', merchant_id: 'fm-1', location: 'Lisbon', payment_type: 'card_present' },
        { transaction_id: 'f-2', amount: 980, customer_id: 'fc-1', merchant_id: 'fm-2', location: 'Porto', payment_type: 'online' },
        { transaction_id: 'f-3', amount: 40, customer_id: 'fc-2', merchant_id: 'fm-1', location: 'Lisbon', payment_type: 'card_present' },
      ];
      for (const p of payments) {
        const answer = (await live.score(fresh, p)).json();
        const [row] = await service.db.query<{ features: Uint8Array }>('SELECT features FROM transactions WHERE organization_id = $1 AND transaction_id = $2', [
          fresh.id,
          p.transaction_id,
        ]);
        const features = new Float32Array(Uint8Array.from(row!.features).buffer);
        const again = service.scorer!.scoreStored(features, 1, 'balanced');
        t.ok(close(again.risk[0]!, answer.risk_score), `${p.transaction_id}: ${again.risk[0]} scored again, ${answer.risk_score} answered`);
        t.equal(again.decisions[0], answer.decision, `${p.transaction_id}: the same decision`);
        if (p.transaction_id === 'f-1')
          t.ok(
            answer.notes.some((n: string) => n.startsWith('COLD_START')),
            'the first payment is a cold start',
          );
      }
    });
  });
}

/** Uploads `rows` as a labelled file for `org`, imports it and waits for the import's features;
 *  returns the rows. */
async function importHistory(t: Test, live: LiveService, org: Organization, rows: Imported[]): Promise<Imported[]> {
  const { app } = live.s;
  const csv = `transaction_id,timestamp,amount,customer_id,merchant_id,location,payment_type,label\n${rows
    .map((r) => [r.id, iso(r.time), r.amount, r.customer, r.merchant, 'Lisbon', 'card_present', r.fraud ? 1 : 0].join(','))
    .join('\n')}\n`;
  const up = await app.inject({
    method: 'POST',
    url: `/api/datasets/upload?organization_id=${org.id}`,
    headers: { ...org.owner.headers, 'content-type': 'text/csv' },
    payload: csv,
  });
  if (up.statusCode !== 201) throw new Error(up.body);
  const queued = await app.inject({
    method: 'POST',
    url: `/api/organizations/${org.id}/history-imports`,
    headers: org.owner.headers,
    payload: { dataset_id: up.json().id },
  });
  if (queued.statusCode !== 202) throw new Error(queued.body);
  const deadline = Date.now() + 300_000;
  for (;;) {
    const job = (await app.inject({ url: `/api/jobs/${queued.json().id}`, headers: org.owner.headers })).json();
    if (job.status === 'failed') throw new Error(job.error);
    if (job.status === 'succeeded') {
      t.match(job.summary, { imported: rows.length, featured: rows.length }, `${org.id}: ${rows.length} imported, each with its features`);
      return rows;
    }
    if (Date.now() > deadline) throw new Error(`the import into ${org.id} did not finish`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
