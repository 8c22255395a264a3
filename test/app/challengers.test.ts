// Challengers over the service's HTTP API, with real sign-in and API keys, on each storage back end:
// - an owner makes custom models challengers (at most three; never the active one); each API-key
//   score is then also scored by every challenger, whose score and decision are recorded with the
//   transaction and never answered: the active model alone decides;
// - promotion (activating a model) and rollback are one action each, audited with who and when;
//   a rollback brings back the model active before the last promotion;
// - another organization's models, challengers and history are not found, and its challengers
//   never score this organization's payments.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';
import { insertCustomModel } from '../../src/storage/models-store.ts';
import { mergeSettings } from '../../src/model/custom.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { averagePrecision, expectedCalibrationError } from '../../src/model/metrics.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { shadowRecords, shadowRows } from '../support/shadow-rows.ts';

const base = loadModelFolder('models/builtin');
if (isProblem(base)) throw new Error(base.message);
const strict = mergeSettings(base.file, { thresholds: { balanced: { review: 0.000_001, block: 0.000_002 } } });
const lenient = mergeSettings(base.file, { thresholds: { balanced: { review: 0.999_998, block: 0.999_999 } } });
const payment = (id: string, amount = 42.5) => ({
  amount,
  customer_id: 'C1',
  merchant_id: 'M1',
  location: 'Lisbon',
  payment_type: 'card_present',
  transaction_id: id,
});

for (const backend of backends()) {
  t.test(`challengers on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app, service } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    const model = (org: Organization, name: string, settings = strict) =>
      insertCustomModel(service.db, { id: `cm_${name}`, organizationId: org.id, name, baseModelId: base.file.id, settings });
    const blocker = await model(a, 'blocker');
    const approver = await model(a, 'approver', lenient);
    const third = await model(a, 'third');
    const fourth = await model(a, 'fourth');
    const theirs = await model(b, 'theirs');
    const as = (org: Organization, method: 'POST' | 'DELETE' | 'GET', url: string) => app.inject({ method, url, headers: org.owner.headers });
    const stored = async (org: Organization, id: string) =>
      (
        await service.db.query<{ challengers: unknown }>('SELECT challengers FROM transactions WHERE organization_id = $1 AND transaction_id = $2', [
          org.id,
          id,
        ])
      )[0]?.challengers;

    await t.test('challengers score in shadow: recorded, never answered, never deciding', async (t) => {
      t.equal((await as(b, 'POST', `/api/models/${blocker.id}/challenger`)).statusCode, 404, "another organization's owner cannot touch it");
      const added = await as(a, 'POST', `/api/models/${blocker.id}/challenger`);
      t.equal(added.statusCode, 200, added.body);
      t.match(added.json(), { id: blocker.id, challenger: true, active: false });
      t.equal((await as(b, 'POST', `/api/models/${theirs.id}/challenger`)).statusCode, 200, "Bolt's own challenger");
      await new Promise((r) => setTimeout(r, 1_100)); // keys are trusted for a second
      const answer = await live.score(a, payment('tx-1'));
      t.equal(answer.statusCode, 200);
      const body = answer.json();
      t.equal(body.model_id, base.file.id, 'the built-in model answers');
      t.not(body.decision, 'block', 'and decides (the challenger would block everything)');
      t.notOk('challengers' in body, 'no challenger in the answer');
      t.notOk(answer.body.includes(blocker.id), 'nor its id anywhere in it');
      const shadow = (await stored(a, 'tx-1')) as { model_id: string; risk_score: number; decision: string }[];
      t.same(
        shadow.map((s) => [s.model_id, s.decision]),
        [[blocker.id, 'block']],
        "Acme's challenger, and not Bolt's, recorded its decision",
      );
      t.ok(Math.abs(shadow[0]!.risk_score - body.risk_score) < 1e-9, 'same boosters and stack: the same score, other thresholds');
      t.equal(await stored(b, 'tx-1'), undefined, 'nothing recorded for Bolt');
      const record = (await as(a, 'GET', `/api/organizations/${a.id}/transactions/tx-1`)).json();
      t.match(
        record,
        { decision: body.decision, model_id: base.file.id, challengers: [{ model_id: blocker.id, decision: 'block' }] },
        'the record shows what the challenger made of it',
      );
      const byKey = (await app.inject({ url: '/api/v1/transactions/tx-1', headers: { authorization: `Bearer ${a.key}` } })).json();
      t.same(byKey.challengers, record.challengers, 'to the key too');
      t.notOk('challengers' in (await as(a, 'GET', `/api/organizations/${a.id}/transactions`)).json().data[0], 'not in listings');
      // A replay is the stored answer: nothing scored again.
      const replay = await live.score(a, payment('tx-1'));
      t.equal(replay.body, answer.body);
    });

    await t.test('at most three challengers, never the active model', async (t) => {
      for (const m of [approver, third]) t.equal((await as(a, 'POST', `/api/models/${m.id}/challenger`)).statusCode, 200);
      const full = await as(a, 'POST', `/api/models/${fourth.id}/challenger`);
      t.equal(full.statusCode, 400, 'limit_reached is a 400 wherever it is answered');
      t.equal(full.json().detail.reason, 'limit_reached');
      await new Promise((r) => setTimeout(r, 1_100));
      await live.score(a, payment('tx-2'));
      t.same(
        ((await stored(a, 'tx-2')) as { model_id: string; decision: string }[]).map((s) => [s.model_id, s.decision]),
        [
          [approver.id, 'approve'],
          [blocker.id, 'block'],
          [third.id, 'block'],
        ],
      );
      t.equal((await as(a, 'DELETE', `/api/models/${third.id}/challenger`)).json().challenger, false);
    });

    await t.test('promotion and rollback: one action each, audited', async (t) => {
      const promoted = await as(a, 'POST', `/api/models/${blocker.id}/activate`);
      t.match(promoted.json(), { active: true, challenger: false }, 'the promoted challenger is no longer one');
      t.equal((await as(a, 'POST', `/api/models/${approver.id}/activate`)).json().active, true, 'a second promotion');
      const refused = await as(a, 'POST', `/api/models/${approver.id}/challenger`);
      t.equal(refused.statusCode, 409, 'the active model cannot be a challenger');
      await new Promise((r) => setTimeout(r, 1_100));
      t.equal((await live.score(a, payment('tx-3'))).json().model_id, approver.id, 'the promoted model answers');
      const back = await as(a, 'POST', `/api/organizations/${a.id}/models/rollback`);
      t.same(back.json(), { model_id: blocker.id, previous_model_id: approver.id }, 'back to the model active before');
      await new Promise((r) => setTimeout(r, 1_100));
      const after = (await live.score(a, payment('tx-4'))).json();
      t.same([after.model_id, after.decision], [blocker.id, 'block']);
      t.same(
        (await as(a, 'POST', `/api/organizations/${a.id}/models/rollback`)).json(),
        { model_id: null, previous_model_id: blocker.id },
        'and again: the built-in model',
      );
      const none = await as(a, 'POST', `/api/organizations/${a.id}/models/rollback`);
      t.equal(none.statusCode, 409, 'nothing left to roll back');
      const audit = (await as(a, 'GET', `/api/organizations/${a.id}/models/audit`)).json().data;
      t.same(
        audit.map((e: { action: string; model_id: string | null; previous_model_id: string | null }) => [e.action, e.model_id, e.previous_model_id]),
        [
          ['rolled_back', null, blocker.id],
          ['rolled_back', blocker.id, approver.id],
          ['promoted', approver.id, blocker.id],
          ['promoted', blocker.id, null],
          ['challenger_removed', third.id, null],
          ['challenger_added', third.id, null],
          ['challenger_added', approver.id, null],
          ['challenger_added', blocker.id, null],
        ],
      );
      t.ok(
        audit.every((e: { by: string; at: string }) => e.by === a.owner.userId && !Number.isNaN(Date.parse(e.at))),
        'who and when',
      );
      t.equal((await as(b, 'GET', `/api/organizations/${a.id}/models/audit`)).statusCode, 404, "another organization's history is not found");
      t.equal((await as(b, 'POST', `/api/organizations/${a.id}/models/rollback`)).statusCode, 404);
      const bAudit = (await as(b, 'GET', `/api/organizations/${b.id}/models/audit`)).json().data;
      t.same(
        bAudit.map((e: { model_id: string }) => e.model_id),
        [theirs.id],
        "Bolt's own history only",
      );
    });

    await t.test('the report: each challenger against the answering model, on outcomes older than the label delay', async (t) => {
      // The last 20 are younger than the label delay: they do not count yet.
      const rows = shadowRows({ seed: 5, old: 380, young: 20, now: Date.now(), labelDelay: service.labelDelay });
      await organizationData(service.db, a.id).transactions.insert(shadowRecords(rows, base.file.id, 'cm_new'));
      const report = await as(a, 'GET', `/api/organizations/${a.id}/challengers/report`);
      t.equal(report.statusCode, 200, report.body);
      const mine = report.json().challengers.find((c: { model_id: string }) => c.model_id === 'cm_new');
      const counted = rows.filter((r) => r.i < 380);
      const labels = counted.map((r) => (r.fraud ? 1 : 0));
      t.equal(mine.overall.transactions, 380, 'only transactions older than the label delay');
      t.equal(mine.overall.frauds, labels.filter((l) => l === 1).length);
      t.same(mine.active_model_ids, [base.file.id]);
      t.ok(
        Math.abs(
          mine.overall.average_precision.active.value -
            averagePrecision(
              counted.map((r) => r.active),
              labels,
            ),
        ) < 1e-9,
        "the active model's AP, recounted",
      );
      t.ok(
        Math.abs(
          mine.overall.average_precision.challenger.value -
            averagePrecision(
              counted.map((r) => r.challenger),
              labels,
            ),
        ) < 1e-9,
        "the challenger's",
      );
      t.ok(
        Math.abs(
          mine.overall.calibration_error.challenger.value -
            expectedCalibrationError(
              counted.map((r) => r.challenger),
              labels,
            ),
        ) < 1e-9,
      );
      t.equal(mine.overall.decisions_changed.count, counted.filter((r) => r.active >= 0.5 !== r.challenger >= 0.5).length);
      t.match(mine.overall.verdict, /^(better|no_difference|worse)$/);
      t.ok(
        mine.weeks.length >= 1 && mine.weeks.reduce((s: number, w: { transactions: number }) => s + w.transactions, 0) === 380,
        'the weeks add up to the whole',
      );
      t.equal((await as(b, 'GET', `/api/organizations/${a.id}/challengers/report`)).statusCode, 404, "another organization's report is not found");
      t.notOk(
        (await as(b, 'GET', `/api/organizations/${b.id}/challengers/report`)).json().challengers.some((c: { model_id: string }) => c.model_id === 'cm_new'),
        "and Bolt's own has none of Acme's rows",
      );
    });
  });
}
