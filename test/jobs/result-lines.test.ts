// The batch job's result lines are made natively (native/src/lines.rs). They must be byte for byte
// what the JavaScript explanation code makes of the same numbers: `JSON.stringify` of the row with
// its reasons from explain.ts, and the download line with every formula defused. This test holds
// them to a plain JavaScript rendering, over the built-in model's features and over edge values
// (ties in rounding and ranking, NaN, ±0, infinities, huge and tiny numbers, ids that need escaping
// in JSON and in CSV, rows without an id or a label).

import t from 'tap';
import { call, resultLines, type LineSetup } from '../../src/engine/addon.ts';
import { RecordStore } from '../../src/engine/records.ts';
import { lineSetup, type ResultRow } from '../../src/jobs/batch-score.ts';
import { isProblem, loadModelFolder } from '../../src/model/bundle.ts';
import { featureText, topReasons, type ChannelExplanation } from '../../src/scoring/explain.ts';
import { Rng } from '../../src/training/rng.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const bundle = loadModelFolder('models/builtin');
if (isProblem(bundle)) throw new Error(bundle.message);

// The download line as the job wrote it in JavaScript before the lines moved to the addon.
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\n\r]/;
function csvCell(value: unknown): string {
  if (typeof value === 'number' && value >= 0) return String(value);
  let s = value === null || value === undefined ? '' : String(value);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
function csvLine(r: ResultRow, channels: readonly string[]): string {
  const cells = [r.row, r.transaction_id, r.amount, r.customer_id, r.merchant_id, r.risk_score, r.risk_band, r.decision, r.path];
  for (const c of ['tabular', 'behavioral', 'velocity', 'graph']) cells.push(channels.includes(c) ? r.channel_scores[c] : '');
  for (let k = 0; k < 3; k++) cells.push(r.top_reasons[k]?.text ?? '');
  cells.push(r.label ?? '');
  return cells.map(csvCell).join(',') + '\r\n';
}

const ODD_IDS = ['=cmd|x', '+1', '-2', '@SUM(A1)', '\tx', '\rx', 'a,b', 'say "hi"', 'line\nbreak', 'back\\slash', 'ctl\u0001\u001f\u0008\u000c', 'tx-€-日本-🙂', '', 'plain', '\u2028sep', 'del\u007f'];

/** Feature values worth trying for each kind of value a reason shows. */
const EDGE_VALUES: Record<string, number[]> = {
  money: [Number.NaN, 0, -0, 1.005, 2.675, 0.125, 1e21, 1e22, -3.5, 123456.789, 5e-324, 0.1 + 0.2],
  count: [Number.NaN, 0, 2.5, -2.5, 3.49999, -0.4, 1e21, Infinity, -Infinity],
  ratio: [Number.NaN, 0.05, 0.25, 0.0125, 1 / 3, -0.05, 100, 1e21],
  rate: [Number.NaN, 0.05, 0.00125, 0.0125, 1 / 3, -0.0005, 1],
  flag: [0, 1, 0.5, 0.4999, Number.NaN],
  hour: [0, 23.99, 0.5, 12.25, 9.999, 23.9999, 0.0083333, -0],
  weekday: [0, 6, 7, 2.5, -0, -1, Number.NaN],
  seconds_log: [0, 59.5, 119.4, 119.5, 120, 7199, 7200, 7230, 172_799, 172_800, 1e7].map(Math.log1p).concat([Infinity, -Infinity, Math.log1p(-0.5)]),
  payment_type: [0, 1, 2, 3, 4, 1.5, -0, -1],
  number: [0, 1, -1, 0.0005, 1.0005, 2.5e-7, 1e21, 1.5, -2.0004, Infinity, -Infinity, Number.NaN],
};

interface Rows {
  store: RecordStore;
  values: Float64Array[];
  phi: Float64Array[];
  scores: Float64Array;
  codes: Uint8Array;
}

/** `n` rows of made-up numbers for `setup`: values drawn from each feature's edge values or at
 *  random, SHAP values with zeros, equal magnitudes and contributions that round to ±0. */
function makeRows(setup: LineSetup, n: number, seed: number, ties: number[]): Rows {
  const rng = new Rng(seed);
  const rand = () => rng.uniform();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const store = new RecordStore();
  for (let j = 0; j < n; j++) {
    const tx = {
      time: j,
      amount: pick([21.98, 0, 1e21, 0.1 + 0.2, 5e-7, 1234.5, -5]),
      customer_id: rand() < 0.3 ? pick(ODD_IDS) : `C${j % 7}`,
      merchant_id: rand() < 0.3 ? pick(ODD_IDS) : `M${j % 3}`,
      location: 'L',
      payment_type: 'wallet',
      ...(rand() < 0.15 ? {} : { transaction_id: rand() < 0.4 ? pick(ODD_IDS) : `T${j}` }),
      ...(rand() < 0.3 ? {} : { label: (rand() < 0.5 ? 0 : 1) as 0 | 1 }),
    };
    store.push(tx);
  }
  const values = setup.channels.map((c) => {
    const w = c.features.length;
    const m = new Float64Array(n * w);
    for (let j = 0; j < n; j++) for (let f = 0; f < w; f++) m[j * w + f] = rand() < 0.6 ? pick(EDGE_VALUES[c.kinds[f]!]!) : (rand() - 0.3) * 100;
    return m;
  });
  const phi = setup.channels.map((c) => {
    const w = c.features.length;
    const m = new Float64Array(n * (w + 1));
    for (let j = 0; j < n; j++) {
      for (let f = 0; f < w; f++) {
        const u = rand();
        m[j * (w + 1) + f] = u < 0.2 ? 0 : u < 0.4 ? pick(ties) * (rand() < 0.5 ? -1 : 1) : u < 0.5 ? (rand() - 0.5) * 1e-6 : (rand() - 0.5) * 3;
      }
      m[j * (w + 1) + w] = -2.5;
    }
    return m;
  });
  const width = 1 + setup.channels.length;
  const scores = new Float64Array(n * width);
  for (let k = 0; k < scores.length; k++) scores[k] = rand() < 0.2 ? pick([0, 1, 1e-7, 0.5, 0.1 + 0.2]) : rand();
  scores[1] = Number.NaN; // a channel score JSON writes as null and the download as NaN
  const codes = new Uint8Array(n * 3);
  for (let j = 0; j < n; j++) {
    codes[j * 3] = Math.floor(rand() * setup.bands.length);
    codes[j * 3 + 1] = Math.floor(rand() * setup.decisions.length);
    codes[j * 3 + 2] = Math.floor(rand() * setup.paths.length);
  }
  return { store, values, phi, scores, codes };
}

/** The rows' lines as JavaScript makes them. */
function expected(setup: LineSetup, r: Rows): { json: string[]; csv: string[] } {
  const width = 1 + setup.channels.length;
  const explained: ChannelExplanation[] = setup.channels.map((c, k) => ({ features: c.features, weight: c.weight, values: r.values[k]!, phi: r.phi[k]! }));
  const json: string[] = [];
  const csv: string[] = [];
  for (let j = 0; j < r.store.length; j++) {
    explained.forEach((e, k) => {
      const w = setup.channels[k]!.features.length;
      e.values = r.values[k]!.subarray(j * w, (j + 1) * w);
      e.phi = r.phi[k]!.subarray(j * (w + 1), (j + 1) * (w + 1));
    });
    const reasons = topReasons(explained, setup.top);
    const row: ResultRow = {
      row: j + 1,
      transaction_id: r.store.transactionId(j)!,
      amount: r.store.amount(j),
      customer_id: r.store.customerId(j),
      merchant_id: r.store.merchantId(j),
      risk_score: r.scores[j * width]!,
      risk_band: setup.bands[r.codes[j * 3]!]!,
      decision: setup.decisions[r.codes[j * 3 + 1]!]!,
      path: setup.paths[r.codes[j * 3 + 2]!]! as ResultRow['path'],
      channel_scores: Object.fromEntries(setup.channels.map((c, k) => [c.name, r.scores[j * width + 1 + k]!])),
      top_reasons: reasons.map((x) => ({ feature: x.feature, contribution: x.contribution, text: x.text })),
      label: r.store.label(j) ?? null,
    };
    json.push(JSON.stringify(row) + '\n');
    csv.push(csvLine(row, setup.channels.map((c) => c.name)));
  }
  return { json, csv };
}

/** The rows' lines from the addon, in batches of `batch`, after `base` bytes already written. */
function native(t: Test, setup: LineSetup, r: Rows, batch: number, base: number): { json: string; csv: string; starts: number[] } {
  const lines = resultLines(setup);
  const width = 1 + setup.channels.length;
  let json = '';
  let csv = '';
  const starts: number[] = [];
  let at = base;
  for (let from = 0; from < r.store.length; from += batch) {
    const to = Math.min(r.store.length, from + batch);
    const count = to - from;
    const cols = r.store.columns(from, to);
    const startsOut = new Float64Array(count);
    const values = setup.channels.map((c, k) => r.values[k]!.subarray(from * c.features.length, to * c.features.length));
    const phi = setup.channels.map((c, k) => r.phi[k]!.subarray(from * (c.features.length + 1), to * (c.features.length + 1)));
    // Buffers too small for some batches: the lines then wait for copyInto.
    let jsonOut = Buffer.alloc(from % 2 === 0 ? 1 << 20 : 100);
    let csvOut = Buffer.alloc(1 << 20);
    const [jsonBytes, csvBytes] = lines.write(from + 1, count, values, phi, r.scores.subarray(from * width, to * width), r.codes.subarray(from * 3, to * 3), cols.amounts, cols.labels, cols.customers, cols.merchants, cols.idBytes, cols.idOffsets, at, startsOut, jsonOut, csvOut);
    if (jsonBytes > jsonOut.length || csvBytes > csvOut.length) {
      t.throws(() => call(() => lines.copyInto(jsonOut, csvOut)), { code: 'invalid_input' }, 'copyInto refuses a buffer too small');
      jsonOut = Buffer.alloc(jsonBytes);
      csvOut = Buffer.alloc(csvBytes);
      lines.copyInto(jsonOut, csvOut);
    }
    at += jsonBytes;
    json += jsonOut.toString('utf8', 0, jsonBytes);
    csv += csvOut.toString('utf8', 0, csvBytes);
    starts.push(...startsOut);
  }
  return { json, csv, starts };
}

function compare(t: Test, setup: LineSetup, r: Rows, batch: number) {
  const want = expected(setup, r);
  const got = native(t, setup, r, batch, 1000);
  const jsonLines = got.json.split(/(?<=\n)/);
  const csvLines = got.csv.split(/(?<=\r\n)/);
  t.equal(jsonLines.length, want.json.length, 'one JSON line per row');
  t.equal(csvLines.length, want.csv.length, 'one download line per row');
  const firstJson = want.json.findIndex((l, j) => l !== jsonLines[j]);
  t.equal(firstJson, -1, firstJson < 0 ? 'every JSON line as JavaScript writes it' : `row ${firstJson + 1}:\n${jsonLines[firstJson]}\n${want.json[firstJson]}`);
  const firstCsv = want.csv.findIndex((l, j) => l !== csvLines[j]);
  t.equal(firstCsv, -1, firstCsv < 0 ? 'every download line as JavaScript writes it' : `row ${firstCsv + 1}:\n${JSON.stringify(csvLines[firstCsv])}\n${JSON.stringify(want.csv[firstCsv])}`);
  let offset = 1000;
  const starts = want.json.map((l) => {
    const s = offset;
    offset += Buffer.byteLength(l);
    return s;
  });
  t.same(got.starts, starts, 'each line start in bytes, after the bytes already written');
}

t.test("the built-in model's features: the job's own setup, edge values and random ones", async (t) => {
  const rows = makeRows(lineSetup(bundle, []), 3000, 11, [0.5, 1, 0.25]);
  const setup = lineSetup(bundle, rows.store.entityNames);
  compare(t, setup, rows, 256);
});

t.test('one feature of every kind, weight 1: exact ties in rounding and in ranking, odd names', async (t) => {
  const names = ['amount', 'customer_prior_count', 'amount_to_customer_mean', 'merchant_known_fraud_rate', 'is_night', 'hour', 'weekday', 'log_seconds_since_customer_last', 'payment_type', 'log_amount', 'mean_amount_24h_with_this', 'odd "name", with\\escapes\u0001'];
  const channel = (name: string, features: string[]) => ({ name, weight: 1, features, display: features.map((f) => featureText(f)[0]), kinds: features.map((f) => featureText(f)[1]) });
  const setup: LineSetup = {
    ...lineSetup(bundle, []),
    channels: [channel('tabular', names.slice(0, 6)), channel('graph', names.slice(6))],
  };
  // Contributions of equal magnitude in both channels, and halves where toFixed(2) and the
  // rounding to six places must round the way JavaScript does.
  const rows = makeRows(setup, 2000, 12, [0.125, 0.375, 1.005, 2.675, 0.0000005, 0.0000015, 0.5]);
  setup.entities = [...rows.store.entityNames];
  compare(t, setup, rows, 97);
});

t.test('arrays that disagree with the batch are refused with invalid_input, not read past', async (t) => {
  const rows = makeRows(lineSetup(bundle, []), 10, 13, [1]);
  const setup = lineSetup(bundle, rows.store.entityNames);
  const lines = resultLines(setup);
  const cols = rows.store.columns(0, 10);
  const write = (over: Partial<{ scores: Float64Array; codes: Uint8Array; customers: Int32Array; count: number }>) =>
    call(() => lines.write(1, over.count ?? 10, rows.values, rows.phi, over.scores ?? rows.scores, over.codes ?? rows.codes, cols.amounts, cols.labels, over.customers ?? cols.customers, cols.merchants, cols.idBytes, cols.idOffsets, 0, new Float64Array(10), Buffer.alloc(1 << 16), Buffer.alloc(1 << 16)));
  t.throws(() => write({ scores: rows.scores.subarray(0, 5) }), { code: 'invalid_input' }, 'scores too short');
  t.throws(() => write({ count: 11 }), { code: 'invalid_input' }, 'more rows than the columns hold');
  t.throws(() => write({ codes: new Uint8Array(30).fill(9) }), { code: 'invalid_input' }, 'a band code with no name');
  t.throws(() => write({ customers: new Int32Array(10).fill(1e6) }), { code: 'invalid_input' }, 'a customer index past the ids');
  t.throws(() => resultLines({ ...setup, channels: [{ ...setup.channels[0]!, kinds: setup.channels[0]!.kinds.map(() => 'colour') }] }), { code: 'invalid_input' }, 'an unknown kind of value');
  t.doesNotThrow(() => write({}), 'the same call with consistent arrays');
});
