// `npm run train -- --organization ORG --recalibrate`, the real command in a child process, on each
// storage back end, against an organization whose traffic the service scored and recorded (its
// clock stepped through 90 days) and whose frauds, at one merchant the built-in model knows nothing
// about, were reported a day later:
// - it refits the stack and calibration from the stored features, stores a custom model every
//   process can load, and measures it on the last part of the traffic: better calibrated there than
//   the built-in model;
// - the same data and --as-of make the same model (the same id and settings; a second run finds it);
// - a fraud reported after --as-of is not known then, and changes nothing (planted);
// - with too few labelled frauds it refuses with exit 2 and the counts;
// - the stored model is a challenger like any other: it scores in shadow after a restart.

import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { backends, freshDatabase, tempDir } from '../support/server.ts';
import { IdentityProvider } from '../support/idp.ts';
import { startLive, type LiveService, type Organization } from '../support/accounts.ts';
import { Rng } from '../../src/domain/rng.ts';
import { setChallenger } from '../../src/storage/models-store.ts';

const run = promisify(execFile);
const DAY = 86_400_000;
const START = Date.UTC(2026, 5, 1);

async function train(env: Record<string, string>, args: string[]): Promise<{ code: number; out: any; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import=tsx', 'tools/train.ts', ...args], { env: { ...process.env, ...env }, timeout: 120_000 });
    return { code: 0, out: JSON.parse(stdout), err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: undefined, err: x.stderr };
  }
}

for (const backend of backends()) {
  t.test(`recalibrating from an organization's history on ${backend.name}`, async (t) => {
    const idp = await new IdentityProvider().start();
    const dataDir = tempDir('train-org-');
    const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
    let now = START;
    const open = () => startLive({ backend, dataDir, ...(db ? { databaseUrl: db.url } : {}), idp, clock: () => now });
    let live: LiveService | undefined = await open();
    t.teardown(async () => {
      await live?.close();
      await idp.close();
      await db?.drop();
    });
    const shop = await live.organization('Shop');
    const quiet = await live.organization('Quiet');
    const key = (org: Organization, url: string, payload: object) => live!.s.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${org.key}` }, payload });

    // 90 days, 20 payments a day; at merchant M-bad 60 % are fraud, elsewhere almost none.
    const rng = new Rng(9);
    const frauds: { id: string; time: number }[] = [];
    for (let i = 0; i < 1800; i++) {
      now = START + Math.floor((i * 90 * DAY) / 1800);
      const bad = rng.uniform() < 0.15;
      const fraud = bad ? rng.uniform() < 0.6 : rng.uniform() < 0.002;
      const id = `tx-${i}`;
      const res = await key(shop, '/api/v1/risk/score', { transaction_id: id, amount: Math.round((20 + rng.uniform() * 300) * 100) / 100, customer_id: `c${Math.floor(rng.uniform() * 300)}`, merchant_id: bad ? 'M-bad' : `m${Math.floor(rng.uniform() * 40)}`, location: 'Lisbon', payment_type: 'card_present' });
      if (res.statusCode !== 200) throw new Error(res.body);
      if (fraud) frauds.push({ id, time: now });
      if (i % 9 === 0) await key(quiet, '/api/v1/risk/score', { transaction_id: id, amount: 50, customer_id: `c${i % 20}`, merchant_id: 'm1', location: 'Lisbon', payment_type: 'card_present' });
    }
    const end = now;
    now = end + 10 * DAY;
    for (let k = 0; k < frauds.length; k += 500) {
      const res = await key(shop, '/api/v1/outcomes', { outcomes: frauds.slice(k, k + 500).map((f) => ({ transaction_id: f.id, outcome: 'fraud', source: 'chargeback', reported_at: new Date(f.time + DAY).toISOString() })) });
      t.equal(res.statusCode, 200);
    }
    const asOf = new Date(end + 8 * DAY).toISOString();
    const env = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : { DATABASE_URL: '' }), LOG_LEVEL: 'silent' };
    // The embedded database belongs to one process: the server stops for the command.
    await live.close();
    live = undefined;

    const first = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', asOf]);
    t.equal(first.code, 0, first.err);
    t.match(first.out, { id: /^cm_[0-9a-f]{16}$/, organization_id: shop.id, as_of: asOf, settings: { calibration: { method: 'platt' } } });
    t.ok(first.out.counts.stack > 0 && first.out.counts.calibration > 0 && first.out.counts.test > 0, 'three parts');
    t.ok(first.out.test.recalibrated.expected_calibration_error < first.out.test.built_in.expected_calibration_error, `better calibrated on the test part: ${first.out.test.recalibrated.expected_calibration_error} against ${first.out.test.built_in.expected_calibration_error}`);
    const again = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', asOf]);
    t.same(again.out, first.out, 'the same data and --as-of: the same model');

    // A fraud reported after --as-of is not known at --as-of.
    live = await open();
    const planted = await key(shop, '/api/v1/transactions/tx-5/outcome', { outcome: 'fraud', source: 'chargeback', reported_at: new Date(end + 9 * DAY).toISOString() });
    t.equal(planted.statusCode, 200, planted.body);
    await live.close();
    live = undefined;
    const afterPlant = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', asOf]);
    t.same(afterPlant.out.settings, first.out.settings, 'a label known only later changes nothing');
    const later = await train(env, ['--organization', shop.id, '--recalibrate', '--as-of', new Date(end + 10 * DAY).toISOString()]);
    t.not(later.out.id, first.out.id, 'read as of after it was reported, it counts');

    const refused = await train(env, ['--organization', quiet.id, '--recalibrate', '--as-of', asOf]);
    t.equal(refused.code, 2);
    t.match(refused.err, /too few labelled frauds to recalibrate from: 0 in the stack part and 0 in the calibration part \(need 20 and 10\), of \d+ transactions older than the label delay with 0 frauds known/);
    t.equal((await train(env, ['--organization', shop.id])).code, 2, '--organization alone is refused');

    // The stored model loads in the service like any custom model: a challenger in shadow.
    live = await open();
    // (The owner's session ended with the 100 days the clock moved: the model is made a challenger
    // in storage, as the API does; that route is tested in test/app/challengers.test.ts.)
    t.match(await setChallenger(live.s.service.db, first.out.id, true, shop.owner.userId), { challenger: true });
    now += 2_000;
    await key(shop, '/api/v1/risk/score', { transaction_id: 'tx-new', amount: 99, customer_id: 'c1', merchant_id: 'M-bad', location: 'Lisbon', payment_type: 'card_present' });
    const record = (await live.s.app.inject({ url: '/api/v1/transactions/tx-new', headers: { authorization: `Bearer ${shop.key}` } })).json();
    t.equal(record.challengers[0]?.model_id, first.out.id, 'it scores in shadow');
  });
}
