// `npm run train -- --organization ORG --recalibrate`, the real command in a child process, on each
// storage back end, against an organization whose traffic the service scored and recorded (its
// clock stepped through 90 days) and whose frauds, at one merchant the built-in model knows nothing
// about, were reported a day later (test/support/organization-traffic.ts):
// - it refits the calibration from the stored features (the built-in boosters and stack kept),
//   stores a custom model every process can load, and measures it on the last part of the traffic
//   with a calibration fitted before it: better calibrated there than the built-in model;
// - the same data and --as-of make the same model (the same id and settings; a second run finds it);
// - a fraud reported after --as-of is not known then, and changes nothing (planted);
// - with too few labelled frauds it refuses with exit 2 and the counts;
// - the same payments imported into another organization (features from the replay of its history)
//   make a model from the same counts;
// - the stored model is a challenger like any other: it scores in shadow after a restart, and so
//   does the model made from the imported copy, which the challengers' report backtests at once
//   over the imported span;
// - POST /api/training/jobs for the organization's own data checks the same (not enough data: 422)
//   and answers 501 with the command and what it would count, as the command then counts.
// Boosters of the organization's own (the command without --recalibrate) need LightGBM:
// test/training/organization.lightgbm.test.ts.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { backends } from '../support/server.ts';
import { DAY, recordedTraffic, train } from '../support/organization-traffic.ts';
import { getCustomModel, setChallenger } from '../../src/storage/models-store.ts';
import { customDetail } from '../../src/app/model-views.ts';
import { computeImportedFeatures } from '../../src/jobs/imported-features.ts';
import type { ReplayRow } from '../../src/storage/imported-features.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';

for (const backend of backends()) {
  t.test(`recalibrating from an organization's history on ${backend.name}`, async (t) => {
    const { shop, quiet, end, env, open, key } = await recordedTraffic(t, backend, 1800);
    const asOf = new Date(end + 8 * DAY).toISOString();

    const first = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', asOf]);
    t.equal(first.code, 0, first.err);
    t.match(first.out, {
      id: /^cm_[0-9a-f]{16}$/,
      organization_id: shop.id,
      kind: 'recalibrated',
      as_of: asOf,
      settings: { calibration: { method: 'platt' } },
    });
    t.notOk(first.out.settings.boosters, 'the built-in boosters');
    t.ok(
      first.out.counts.calibration > 0 && first.out.counts.test > 0 && first.out.counts.calibration + first.out.counts.test < first.out.counts.transactions,
      'fitted before the test part, the label delay between',
    );
    t.same(first.out.settings.stack, JSON.parse(readFileSync('models/builtin/model.json', 'utf8')).stack, 'the built-in stack kept');
    t.ok(
      first.out.test.challenger.expected_calibration_error < first.out.test.built_in.expected_calibration_error,
      `better calibrated on the test part: ${first.out.test.challenger.expected_calibration_error} against ${first.out.test.built_in.expected_calibration_error}`,
    );
    const { challenger } = first.out.test;
    const [low, high] = challenger.intervals.expected_calibration_error;
    t.ok(low <= challenger.expected_calibration_error && challenger.expected_calibration_error <= high, `with its interval: [${low}, ${high}]`);
    t.match(first.out.test.challenger_minus_built_in, { roc_auc: { difference: Number, interval: [Number, Number] } }, 'and the gain over the built-in one');
    const again = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', asOf]);
    t.same(again.out, first.out, 'the same data and --as-of: the same model');

    // A fraud reported after --as-of is not known at --as-of.
    let live = await open(end + 10 * DAY);

    // The same payments imported into another organization instead of scored, each outcome with
    // Shop's time known: their features come from the replay (src/jobs/imported-features.ts), and
    // the same training counts them as it counted Shop's. (Not the same model: Shop's outcomes were
    // reported after its last payment, dated earlier, so its payments were scored without them,
    // where the replay takes each as known from its date: docs/model.md.)
    const copy = await live.organization('Copy');
    const db = live.s.service.db;
    const shopRows = await db.query<Omit<ReplayRow, 'seq' | 'featureless'>>(
      `SELECT transaction_id, time_ms AS time, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms
       FROM transactions WHERE organization_id = $1 ORDER BY time_ms, seq`,
      [shop.id],
    );
    const imports: NewTransaction[] = shopRows.map((r) => ({
      transaction_id: r.transaction_id,
      time: r.time,
      amount: r.amount,
      customer_id: r.customer_id,
      merchant_id: r.merchant_id,
      location: r.location,
      payment_type: r.payment_type,
      source: 'import',
      label: r.label,
      label_known_ms: r.label_known_ms,
    }));
    for (let i = 0; i < imports.length; i += 500) await organizationData(db, copy.id).transactions.insert(imports.slice(i, i + 500));
    t.equal(await computeImportedFeatures(db, copy.id, live.s.service.scorer!.bundle), imports.length, 'every imported payment has its features');
    await live.close();
    const fromImport = await train(env, ['--organization', copy.id, '--recalibrate', '--as-of', asOf]);
    t.equal(fromImport.code, 0, fromImport.err);
    t.match(fromImport.out, { kind: 'recalibrated', organization_id: copy.id, counts: first.out.counts }, 'imported instead of scored: a model, counted alike');
    t.type(fromImport.out.test.challenger.expected_calibration_error, 'number', 'with its test figures');
    live = await open(end + 10 * DAY);
    const planted = await key(live, shop, '/api/v1/transactions/tx-5/outcome', {
      outcome: 'fraud',
      source: 'chargeback',
      reported_at: new Date(end + 9 * DAY).toISOString(),
    });
    t.equal(planted.statusCode, 200, planted.body);
    // The API's training route checks the same data by the same use case, and answers 501 naming
    // the command (its clock is the --as-of of the `later` run below).
    const plan = async (by: string, payload: object) =>
      live.s.app.inject({ method: 'POST', url: '/api/training/jobs', headers: (await live.signIn(by)).headers, payload });
    const shopPlan = await plan('owner-of-Shop', { organization_id: shop.id, recalibrate: true });
    t.equal(shopPlan.statusCode, 501, shopPlan.body);
    const planned = shopPlan.json().detail;
    t.match(planned, {
      reason: 'not_implemented',
      fix: new RegExp(`npm run train -- --organization ${shop.id} --recalibrate`),
      would_run: { source: 'organization', kind: 'recalibrated', organization_id: shop.id, as_of: new Date(end + 10 * DAY).toISOString() },
    });
    t.equal(planned.would_run.transactions.imported, 0, "Shop's transactions were all scored");
    const copyPlan = (await plan('owner-of-Copy', { organization_id: copy.id, recalibrate: true })).json().detail.would_run;
    t.match(
      copyPlan.transactions,
      { scored: 0, imported: copyPlan.counts.transactions, first: planned.would_run.transactions.first },
      "Copy's were all imported, over the same span",
    );
    const quietPlan = await plan('owner-of-Quiet', { organization_id: quiet.id, recalibrate: true });
    t.equal(quietPlan.statusCode, 422);
    t.match(quietPlan.json().detail, { reason: 'not_enough_data', message: /too few labelled frauds to recalibrate from: 0 before the test part/ });
    t.equal((await plan('owner-of-Copy', { organization_id: shop.id })).statusCode, 404, "another organization's data is not there for its owner");
    const neither = (await plan('owner-of-Shop', {})).json().detail;
    t.match(neither, { reason: 'validation_failed', fields: [{ path: 'body.dataset_id' }] }, 'a dataset or an organization is named');
    const both = (await plan('owner-of-Shop', { dataset_id: 'ds_x', organization_id: shop.id, recalibrate: true })).json().detail;
    t.match(both, { reason: 'validation_failed', fields: [{ path: 'body.recalibrate' }] }, "recalibrate is for an organization's own data");
    await live.close();
    const afterPlant = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', asOf]);
    t.same(afterPlant.out.settings, first.out.settings, 'a label known only later changes nothing');
    const later = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', new Date(end + 10 * DAY).toISOString()]);
    t.not(later.out.id, first.out.id, 'read as of after it was reported, it counts');
    t.same(planned.would_run.counts, later.out.counts, "the route's plan counted what the command trained on");

    const refused = await train(env, ['--organization', quiet.id, '--recalibrate', '--as-of', asOf]);
    t.equal(refused.code, 2);
    t.match(
      refused.err,
      /too few labelled frauds to recalibrate from: 0 before the test part \(need 10\), of \d+ transactions older than the label delay with 0 frauds known/,
    );
    // The command's own checks, once (each run is a process that loads the training library).
    if (backend.name === 'pglite') {
      const alone = await train(env, ['--recalibrate']);
      t.equal(alone.code, 2, '--recalibrate without --organization is refused');
      t.match(alone.err, /--recalibrate needs --organization ORG_ID/);
      const missing = await train(env, ['--organization', 'org_missing', '--recalibrate']);
      t.equal(missing.code, 2, 'an organization that does not exist is refused');
      t.match(missing.err, /No organization org_missing/);
    }

    // The stored model loads in the service like any custom model: a challenger in shadow.
    live = await open(end + 10 * DAY + 2_000);
    // (The owner's session ended with the 100 days the clock moved: the model is made a challenger
    // in storage, as the API does; that route is tested in test/app/challengers.test.ts.)
    t.match(await setChallenger(live.s.service.db, first.out.id, true, shop.owner.userId), { challenger: true });
    /** A new payment scored with the organization's key: the challenger that scored it in shadow. */
    const shadowOf = async (org: typeof shop, id: string): Promise<string | undefined> => {
      await key(live, org, '/api/v1/risk/score', {
        transaction_id: id,
        amount: 99,
        customer_id: 'c1',
        merchant_id: 'M-bad',
        location: 'Lisbon',
        payment_type: 'card_present',
      });
      const record = (await live.s.app.inject({ url: `/api/v1/transactions/${id}`, headers: { authorization: `Bearer ${org.key}` } })).json();
      return record.challengers[0]?.model_id;
    };
    t.equal(await shadowOf(shop, 'tx-new'), first.out.id, 'it scores in shadow');
    // And the model learned from the imported payments, made a challenger by Copy's owner through
    // the API (a session of today's clock), scores Copy's new payments in shadow.
    const copyOwner = await live.signIn('owner-of-Copy');
    const made = await live.s.app.inject({ method: 'POST', url: `/api/models/${fromImport.out.id}/challenger`, headers: copyOwner.headers });
    t.equal(made.statusCode, 200, made.body);
    t.equal(await shadowOf(copy, 'copy-new'), fromImport.out.id, "the imported organization's own model scores in shadow");
    // And the challengers' report compares it at once over Copy's imported span, labelled as a
    // backtest: every imported payment (all older than the label delay by now), the frauds known now.
    const copyReport = await live.s.app.inject({ url: `/api/organizations/${copy.id}/challengers/report`, headers: copyOwner.headers });
    t.equal(copyReport.statusCode, 200, copyReport.statusCode === 200 ? "Copy's challengers' report" : copyReport.body);
    const knownNow = end + 10 * DAY + 2_000;
    const backtest = copyReport.json().challengers.find((c: { model_id: string }) => c.model_id === fromImport.out.id)?.backtest;
    t.comment(`backtest of the model made from these very payments: ${backtest?.comparison.verdict}; ${backtest?.comparison.evidence.join('; ')}`);
    t.match(
      backtest,
      {
        kind: 'backtest',
        active_model_id: live.s.service.scorer!.bundle.file.id,
        transactions: imports.length,
        comparison: { transactions: imports.length, frauds: imports.filter((r) => r.label === 1 && r.label_known_ms! <= knownNow).length },
      },
      "the report's backtest over the imported span, against the built-in model",
    );
    const shown = customDetail((await getCustomModel(live.s.service.db, first.out.id))!, live.s.service.scorer!.bundle);
    t.match(
      shown,
      { boosters: 'built_in', boosters_sha256: null, calibration: first.out.settings.calibration },
      'GET /api/models/{id} shows its own calibration, not the built-in one',
    );
  });
}
