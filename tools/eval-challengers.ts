// `npm run eval:challengers [-- --seeds K] [--seed N] [--quick]`: the challenger loop on the
// simulator, end to end through the service, as an organization would live it. Per simulator seed
// and per trial:
// - `recalibrate`: a population other than the one the built-in model was trained on (0.3× the
//   customers and merchants); a `--recalibrate` challenger;
// - `other_mix`: the same smaller population with another mix of the simulator's own fraud
//   (compromised merchants ten times as often, account takeovers and card testing a third as
//   often); a challenger with boosters of its own;
// - `new_pattern`: the smaller population with a fraud pattern no simulator scenario has, planted
//   (a third of the wallet payments of 40 to 60 are fraud); a challenger with boosters of its own.
// The organization's first 60 days are scored live by the built-in model (every payment a
// POST /api/v1/risk/score at its simulated time; each fraud reported 1–5 days later, as a
// chargeback would be, while the clock moves); the challenger is trained as of day 60
// (src/app/organization-training.ts, the command's own use case) and scores the next 30 days in shadow; the
// report (GET …/challengers/report's use case) is read once every one of those payments is older
// than the label delay; when the command refuses to make a challenger, its reason is the trial's
// result. Prints a line per trial and, last, one JSON object with every report's overall figures
// and verdict (no ids: the organization's is random). Seeded: the same seeds make the same figures.
// Runs on a fresh embedded database in a temporary directory, deleted at the end.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine, flag, oneOf, wholeNumber } from '../src/command-line.ts';
import { NothingLearned, TooFewFrauds } from '../src/training/organization.ts';
import { trainOrganizationModel, type OrganizationModel } from '../src/app/organization-training.ts';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/app/service.ts';
import { openApp } from '../src/app/app.ts';
import { buildApp } from '../src/http/app.ts';
import { createOrganizationFromCommandLine } from '../src/app/access/organizations.ts';
import { challengerReport } from '../src/app/decisions/challenger-report.ts';
import { upsertUser } from '../src/storage/accounts-store.ts';
import { setChallenger } from '../src/storage/models-store.ts';
import { isProblem } from '../src/model/bundle-types.ts';
import { DEFAULT_SIMULATION, simulate, type SimulatedTransaction } from '../src/domain/simulate.ts';
import { Rng } from '../src/domain/rng.ts';

const values = commandLine({
  name: 'eval:challengers',
  about: 'Challengers on the simulator through the service: 60 days scored, a challenger trained, 30 days in shadow, its report.',
  options: {
    seed: wholeNumber('first simulator seed (default 20260102)'),
    seeds: wholeNumber('number of simulator seeds, N .. N+K-1 (default 3; 1 with --quick)', { min: 1, value: 'K' }),
    trial: oneOf(['recalibrate', 'other_mix', 'new_pattern'], 'one trial only (default: each)'),
    quick: flag('one seed'),
  },
});
const firstSeed = values.seed ?? 20260102;
const seeds = values.seeds ?? (values.quick ? 1 : 3);

const DAY = 86_400_000;
const TRAIN_DAYS = 60;
const SHADOW_DAYS = 30;
const SCALE = 0.3;
const S = DEFAULT_SIMULATION;
/** A pattern of fraud no simulator scenario has, planted on the simulated rows: a third of the
 *  wallet payments of 40 to 60 (a resold-voucher scheme, say) are fraud. */
function planted(rows: SimulatedTransaction[], seed: number): SimulatedTransaction[] {
  const rng = new Rng(seed ^ 0x9a11e7);
  return rows.map((r) =>
    r.label === 0 && r.payment_type === 'wallet' && r.amount >= 40 && r.amount < 60 && rng.uniform() < 1 / 3 ? { ...r, label: 1 as const } : r,
  );
}
const TRIALS = {
  recalibrate: { rates: S.rates, recalibrate: true, plant: false },
  other_mix: {
    rates: {
      compromised_merchant: S.rates.compromised_merchant * 10,
      account_takeover: S.rates.account_takeover / 3,
      card_testing: S.rates.card_testing / 3,
      large_amount: S.rates.large_amount,
    },
    recalibrate: false,
    plant: false,
  },
  new_pattern: { rates: S.rates, recalibrate: false, plant: true },
} as const;
type TrialName = keyof typeof TRIALS;

const OWNER = { id: 'eval:challengers', email: 'eval-challengers@example.com', name: 'eval:challengers', avatar_url: null };

async function trial(name: TrialName, seed: number) {
  const t = TRIALS[name];
  const simulated = simulate({
    seed,
    customers: Math.round(S.customers * SCALE),
    merchants: Math.round(S.merchants * SCALE),
    days: TRAIN_DAYS + SHADOW_DAYS,
    rates: t.rates,
  });
  const rows = t.plant ? planted(simulated, seed) : simulated;
  const dir = mkdtempSync(join(tmpdir(), 'eval-challengers-'));
  let now = rows[0]!.time;
  const config = loadConfig({}, { DATA_DIR: dir, DATABASE_URL: '', LOG_LEVEL: 'silent', SCORE_RATE_PER_MINUTE: 1_000_000_000 });
  const service = await startService(config, { clock: () => now });
  const app = await buildApp(openApp(service), { logger: false });
  try {
    if (isProblem(service.model)) throw new Error(service.model.message);
    await upsertUser(service.db, OWNER);
    const made = await createOrganizationFromCommandLine(service.db, service.accounts!, { name: `${name} ${seed}`, stage: 'test', ownerEmail: OWNER.email });
    const organization = made.organization.id;
    const auth = { authorization: `Bearer ${made.secret}` };
    const rng = new Rng(seed ^ 0x0c4a11);
    // Frauds are reported 1–5 days after the payment (within the label delay), in time order.
    const reports: { id: string; at: number }[] = [];
    const report = async (until: number) => {
      reports.sort((a, b) => a.at - b.at);
      let n = 0;
      while (n < reports.length && reports[n]!.at <= until) n++;
      const due = reports.splice(0, n);
      for (let k = 0; k < due.length; k += 500) {
        const res = await app.inject({
          method: 'POST',
          url: '/api/v1/outcomes',
          headers: auth,
          payload: {
            outcomes: due
              .slice(k, k + 500)
              .map((r) => ({ transaction_id: r.id, outcome: 'fraud', source: 'chargeback', reported_at: new Date(r.at).toISOString() })),
          },
        });
        if (res.statusCode !== 200) throw new Error(`outcomes: ${res.body}`);
      }
    };
    const score = async (r: SimulatedTransaction) => {
      now = r.time;
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/risk/score',
        headers: auth,
        payload: {
          transaction_id: r.transaction_id,
          amount: r.amount,
          customer_id: r.customer_id,
          merchant_id: r.merchant_id,
          location: r.location,
          payment_type: r.payment_type,
        },
      });
      if (res.statusCode !== 200) throw new Error(`score: ${res.body}`);
      if (r.label === 1) reports.push({ id: r.transaction_id, at: r.time + DAY * (1 + 4 * rng.uniform()) });
    };
    let challenger: OrganizationModel | undefined;
    let refused: string | undefined;
    const start = rows[0]!.time;
    const cut = start + TRAIN_DAYS * DAY;
    let day = start;
    for (const r of rows) {
      if (r.time >= day + DAY) {
        day += DAY * Math.floor((r.time - day) / DAY);
        await report(day);
      }
      if (r.time >= cut && !challenger && refused === undefined) {
        now = cut;
        await report(cut);
        try {
          challenger = await trainOrganizationModel(service.db, service.model, {
            modelDir: config.MODEL_DIR,
            organization,
            asOf: cut,
            recalibrate: t.recalibrate,
            name: `${name} as of day ${TRAIN_DAYS}`,
          });
        } catch (e) {
          // The command's refusal is a result too: it is what the organization would be told.
          if (!(e instanceof NothingLearned || e instanceof TooFewFrauds)) throw e;
          refused = e.message;
          break;
        }
        await setChallenger(service.db, challenger.id, true, OWNER.id);
        service.accounts!.forgetKeys();
      }
      await score(r);
    }
    const base = { trial: name, seed, transactions: rows.length, frauds: rows.filter((r) => r.label === 1).length };
    if (refused !== undefined) return { ...base, refused };
    const last = rows[rows.length - 1]!.time;
    now = last + service.labelDelay + DAY;
    await report(now);
    const result = await challengerReport({ db: service.db, labelDelay: service.labelDelay, clock: () => now }, organization, OWNER.id);
    if (!challenger) throw new Error('the simulation ended before the cut');
    return { ...base, challenger, report: result.challengers[0] };
  } finally {
    await app.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (x: { value: number | null; low: number | null; high: number | null } | null | undefined, d = 3) =>
  x && x.value !== null ? `${x.value.toFixed(d)} (${x.low?.toFixed(d)}–${x.high?.toFixed(d)})` : 'n/a';
const results = [];
for (const name of values.trial ? [values.trial] : (Object.keys(TRIALS) as TrialName[])) {
  for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
    const began = Date.now();
    const r = await trial(name, seed);
    if ('refused' in r) {
      console.log(
        `${name} seed ${seed}: ${r.transactions} payments (${r.frauds} fraud), ${((Date.now() - began) / 1000).toFixed(0)} s; no challenger: ${r.refused}`,
      );
      results.push({ trial: r.trial, seed: r.seed, transactions: r.transactions, frauds: r.frauds, refused: r.refused, report: null });
      continue;
    }
    const o = r.report?.overall;
    console.log(
      `${name} seed ${seed}: ${r.transactions} payments (${r.frauds} fraud), ${((Date.now() - began) / 1000).toFixed(0)} s; challenger ${r.challenger.kind} from ${r.challenger.counts.frauds} frauds known at day ${TRAIN_DAYS}; ` +
        (o
          ? `shadow ${o.transactions} (${o.frauds} fraud): AP ${fmt(o.average_precision?.active)} → ${fmt(o.average_precision?.challenger)}, AUC ${fmt(o.roc_auc?.active)} → ${fmt(o.roc_auc?.challenger)}, ECE ${fmt(o.calibration_error.active, 4)} → ${fmt(o.calibration_error.challenger, 4)}: ${o.verdict}`
          : 'no shadow rows'),
    );
    results.push({
      trial: r.trial,
      seed: r.seed,
      transactions: r.transactions,
      frauds: r.frauds,
      challenger: {
        kind: r.challenger.kind,
        ...(r.challenger.features_left_out ? { features_left_out: r.challenger.features_left_out.map((m) => m.feature) } : {}),
        counts: r.challenger.counts,
        test: r.challenger.test,
      },
      report: o ?? null,
    });
  }
}
console.log(JSON.stringify({ evaluation: 'challengers', scale: SCALE, train_days: TRAIN_DAYS, shadow_days: SHADOW_DAYS, results }));
