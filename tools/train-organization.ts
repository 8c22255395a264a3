// `npm run train -- --organization ORG --recalibrate [--as-of ISO] [--name NAME]`: a challenger for
// one organization made from its own recorded traffic, offline. It keeps the built-in boosters and
// refits what turns their margins into a probability, the stack (bias and one weight per channel)
// and the Platt calibration, on the organization's outcomes, point in time:
// - the margins are recomputed from the features stored with each scored transaction (exactly what
//   the model saw when it scored it), so nothing is re-derived from later history;
// - a transaction counts only when it is older than the model's label delay at `--as-of` (default:
//   now), and its label is the outcome known by `--as-of`: a fraud reported later is not a fraud
//   here (it is not known yet), and one never reported counts as legitimate;
// - split by time into stack (first 40 %), calibration (next 30 %) and test (last 30 %) parts, each
//   separated by the label delay, as training does; the test part measures the built-in model and
//   the recalibrated one on the same rows.
// Too few labelled frauds to fit from: exit 2 with the counts. Otherwise the model is stored in the
// database as a custom model of the organization (every process loads it from there), its id a
// digest of its settings and base model, so the same data and `--as-of` make the same model, byte
// for byte, and running again finds it rather than storing a second copy. It is printed as one
// JSON line with its test figures; an owner then makes it a challenger.

import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/storage/open.ts';
import { getCustomModel, insertCustomModel, organizationExists } from '../src/storage/models-store.ts';
import { organizationData } from '../src/storage/organization-data.ts';
import { loadModelFolder } from '../src/model/bundle.ts';
import { isProblem, type ModelBundle } from '../src/model/bundle-types.ts';
import { CustomSettings } from '../src/model/custom.ts';
import { averagePrecision, expectedCalibrationError, rocAuc } from '../src/model/metrics.ts';
import { fitLogistic, sigmoid } from './training/logistic.ts';
import { splitByTime } from './training/split.ts';
import { sha256 } from './training/digest.ts';

/** Fewest labelled frauds the stack and the calibration parts must each hold. */
export const MIN_FRAUDS = { stack: 20, calibration: 10 } as const;

export class TooFewFrauds extends Error {}

interface Row {
  time: number;
  label: 0 | 1;
  raw: number[];
}

/** Each channel's raw margin from the stored features (every channel's, in the model's order). */
function margins(bundle: ModelBundle, features: Uint8Array[]): number[][] {
  const widths = bundle.channels.map((c) => c.features.length);
  const total = widths.reduce((a, b) => a + b, 0);
  const rows = features.map((bytes) => new Float32Array(Uint8Array.from(bytes).buffer, 0, total));
  const out = rows.map(() => new Array<number>(bundle.channels.length));
  let offset = 0;
  bundle.channels.forEach((c, k) => {
    const w = widths[k]!;
    const flat = new Float64Array(rows.length * w);
    rows.forEach((r, i) => {
      for (let j = 0; j < w; j++) flat[i * w + j] = r[offset + j]!;
    });
    const raw = c.engine.predictRawBatch(flat);
    raw.forEach((v, i) => (out[i]![k] = v));
    offset += w;
  });
  return out;
}

/** The organization's scored transactions that count at `asOf`, oldest first. */
async function countedRows(db: Parameters<typeof organizationData>[0], organizationId: string, bundle: ModelBundle, asOf: number): Promise<Row[]> {
  const data = organizationData(db, organizationId);
  const until = asOf - bundle.file.training.label_delay_ms;
  const kept: { time: number; label: 0 | 1; features: Uint8Array }[] = [];
  let after: [number, number] | undefined;
  for (;;) {
    const page = await data.decisions.page({ from: 0, to: until, after, withFeatures: true });
    if (page.length === 0) break;
    for (const r of page) {
      if (!r.features) continue;
      const known = r.label === 1 && r.label_known_ms !== null && r.label_known_ms <= asOf;
      kept.push({ time: r.time_ms, label: known ? 1 : 0, features: r.features });
    }
    const last = page[page.length - 1]!;
    after = [last.time_ms, last.seq];
  }
  const raw = margins(bundle, kept.map((k) => k.features));
  return kept.map((k, i) => ({ time: k.time, label: k.label, raw: raw[i]! }));
}

export interface Recalibrated {
  settings: CustomSettings;
  counts: { transactions: number; frauds: number; stack: number; calibration: number; test: number; test_frauds: number };
  test: { built_in: Figures; recalibrated: Figures };
}

interface Figures {
  average_precision: number | null;
  roc_auc: number | null;
  expected_calibration_error: number;
  mean_score: number;
  fraud_rate: number;
}

function figures(p: ArrayLike<number>, y: ArrayLike<number>): Figures {
  const frauds = Array.from(y).filter((v) => v === 1).length;
  const round = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    average_precision: frauds > 0 ? round(averagePrecision(p, y)) : null,
    roc_auc: frauds > 0 && frauds < y.length ? round(rocAuc(p, y)) : null,
    expected_calibration_error: round(expectedCalibrationError(p, y)),
    mean_score: round(Array.from(p).reduce((a, b) => a + b, 0) / Math.max(p.length, 1)),
    fraud_rate: round(frauds / Math.max(y.length, 1)),
  };
}

/** The stack and calibration refitted on `rows`; throws TooFewFrauds with the counts. */
export function recalibrate(bundle: ModelBundle, rows: readonly Row[]): Recalibrated {
  const f = bundle.file;
  let split: ReturnType<typeof splitByTime>;
  try {
    split = splitByTime(Float64Array.from(rows, (r) => r.time), { validationShare: 0.3, testShare: 0.3, gap: f.training.label_delay_ms });
  } catch (e) {
    throw new TooFewFrauds(`the organization's ${rows.length} transactions older than the label delay (${rows.filter((r) => r.label === 1).length} frauds known) ${rows.length ? 'span too little time for three parts separated by the label delay' : 'are none'}: ${(e as Error).message}. Wait for more traffic.`);
  }
  const part = (indices: number[]) => indices.map((i) => rows[i]!);
  const stackRows = part(split.train);
  const calibrationRows = part(split.validation);
  const testRows = part(split.test);
  const frauds = (rs: readonly Row[]) => rs.filter((r) => r.label === 1).length;
  const counts = { transactions: rows.length, frauds: frauds(rows), stack: stackRows.length, calibration: calibrationRows.length, test: testRows.length, test_frauds: frauds(testRows) };
  if (frauds(stackRows) < MIN_FRAUDS.stack || frauds(calibrationRows) < MIN_FRAUDS.calibration) {
    throw new TooFewFrauds(
      `too few labelled frauds to recalibrate from: ${frauds(stackRows)} in the stack part and ${frauds(calibrationRows)} in the calibration part (need ${MIN_FRAUDS.stack} and ${MIN_FRAUDS.calibration}), of ${rows.length} transactions older than the label delay with ${counts.frauds} frauds known. Report more outcomes, or wait for more traffic.`,
    );
  }
  const k = bundle.channels.length;
  const flat = (rs: readonly Row[]) => Float64Array.from(rs.flatMap((r) => r.raw));
  const stack = fitLogistic(flat(stackRows), k, Float64Array.from(stackRows, (r) => r.label));
  const stacked = (r: Row) => r.raw.reduce((z, v, j) => z + stack.weights[j]! * v, stack.bias);
  const platt = fitLogistic(Float64Array.from(calibrationRows, stacked), 1, Float64Array.from(calibrationRows, (r) => r.label));
  const names = bundle.channels.map((c) => c.name);
  const settings = CustomSettings.parse({
    stack: { bias: stack.bias, weights: Object.fromEntries(names.map((n, j) => [n, stack.weights[j]!])) },
    thresholds: Object.fromEntries(Object.entries(f.thresholds).map(([mode, t]) => [mode, { review: t.review, block: t.block }])),
    bands: { medium: f.bands.medium, high: f.bands.high, critical: f.bands.critical },
    calibration: { method: 'platt', bias: platt.bias, slope: platt.weights[0]! },
  });
  const builtIn = (r: Row) => sigmoid(f.calibration.bias + f.calibration.slope * r.raw.reduce((z, v, j) => z + f.stack.weights[names[j]! as keyof typeof f.stack.weights] * v, f.stack.bias));
  const mine = (r: Row) => sigmoid(platt.bias + platt.weights[0]! * stacked(r));
  const y = Float64Array.from(testRows, (r) => r.label);
  return { settings, counts, test: { built_in: figures(Float64Array.from(testRows, builtIn), y), recalibrated: figures(Float64Array.from(testRows, mine), y) } };
}

/** Runs the command: 0 with the model printed, 2 with the reason on standard error. */
export async function trainOrganization(o: { organization: string; asOf: number; name: string | undefined }): Promise<number> {
  const config = loadConfig();
  const base = loadModelFolder(config.MODEL_DIR);
  if (isProblem(base)) {
    process.stderr.write(`npm run train: ${base.message}\n`);
    return 2;
  }
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    if (!(await organizationExists(db, o.organization))) {
      process.stderr.write(`npm run train: no organization ${o.organization}\n`);
      return 2;
    }
    let made: Recalibrated;
    try {
      made = recalibrate(base, await countedRows(db, o.organization, base, o.asOf));
    } catch (e) {
      if (!(e instanceof TooFewFrauds)) throw e;
      process.stderr.write(`npm run train: ${e.message}\n`);
      return 2;
    }
    const id = `cm_${sha256(JSON.stringify({ organization: o.organization, base: base.file.id, settings: made.settings })).slice(0, 16)}`;
    const model = (await getCustomModel(db, id)) ?? (await insertCustomModel(db, { id, organizationId: o.organization, name: o.name ?? `recalibrated as of ${new Date(o.asOf).toISOString()}`, baseModelId: base.file.id, settings: made.settings }));
    process.stdout.write(`${JSON.stringify({ id: model.id, organization_id: model.organization_id, name: model.name, base_model_id: model.base_model_id, as_of: new Date(o.asOf).toISOString(), counts: made.counts, test: made.test, settings: model.settings })}\n`);
    return 0;
  } finally {
    await db.close();
  }
}
