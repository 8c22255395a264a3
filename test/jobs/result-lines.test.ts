// The batch job's result lines are made natively (native/src/lines.rs, with reasons from
// native/src/reasons.rs). This test holds them, byte for byte, to what a user reads, rendered
// plainly in JavaScript here: every non-zero contribution sorted, the first `top` worded as the
// service words them, `JSON.stringify` of the row, and the download: its header and its lines in
// the columns the API reference names, every formula defused. It covers the built-in model's
// features and edge values (ties in rounding and ranking, NaN, ±0, infinities, huge and tiny
// numbers, ids that need escaping in JSON and in CSV, rows without an id or a label), other
// numbers of reasons, and the single-request path's reasons (explain.ts `topReasons`) against a
// batch row's.

import t from 'tap';
import { reasons, resultLines, type LineSetup, type ReasonSetup } from '../../src/addon/addon.ts';
import { RecordStore } from '../../src/domain/history/records.ts';
import { lineSetup } from '../../src/jobs/batch-score.ts';
import type { ResultRow } from '../../src/jobs/result-row.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { reasonSetup, topReasons, type ChannelExplanation } from '../../src/scoring/explain.ts';
import { Rng } from '../../src/domain/rng.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const bundle = loadModelFolder('models/builtin');
if (isProblem(bundle)) throw new Error(bundle.message);

// The download, rendered plainly in JavaScript: what the addon's header and lines are held to.
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\n\r]/;
function csvCell(value: unknown): string {
  if (typeof value === 'number' && value >= 0) return String(value);
  let s = value === null || value === undefined ? '' : String(value);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
/** The download's header as the API reference names its columns (GET /api/jobs/{id}/download). */
function csvHeader(csvChannels: readonly string[], top: number): string {
  const scores = csvChannels.map((c) => `score_${c}`);
  const reasons = Array.from({ length: top }, (_, r) => `reason_${r + 1}`);
  return (
    ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', ...scores, ...reasons, 'label'].join(',') +
    '\r\n'
  );
}
/** A row's download line, in the header's columns: a score cell empty for a channel the model
 *  does not have, a reason cell empty past the row's reasons. */
function csvLine(r: ResultRow, csvChannels: readonly string[], top: number): string {
  const scores = csvChannels.map((c) => (c in r.channel_scores ? r.channel_scores[c] : ''));
  const reasons = Array.from({ length: top }, (_, i) => r.top_reasons[i]?.text ?? '');
  const cells = [
    r.row,
    r.transaction_id,
    r.amount,
    r.customer_id,
    r.merchant_id,
    r.risk_score,
    r.risk_band,
    r.decision,
    r.path,
    ...scores,
    ...reasons,
    r.label,
  ];
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** A feature's value as a reason shows it, by kind (the wording the service documents). */
function plainValue(value: number, kind: string, setup: ReasonSetup): string {
  if (Number.isNaN(value)) return kind === 'flag' || kind === 'payment_type' ? 'not given' : 'no history';
  const round = Math.round;
  switch (kind) {
    case 'money':
      return value.toFixed(2);
    case 'count':
      return String(round(value));
    case 'ratio':
      return `${value.toFixed(1)}×`;
    case 'rate':
      return `${(value * 100).toFixed(1)} %`;
    case 'flag':
      return value >= 0.5 ? 'yes' : 'no';
    case 'hour': {
      const h = Math.floor(value);
      return `${String(h).padStart(2, '0')}:${String(round((value - h) * 60)).padStart(2, '0')}`;
    }
    case 'weekday':
      return setup.weekdays[value] ?? String(value);
    case 'seconds_log': {
      const s = Math.expm1(value);
      if (s < 120) return `${round(s)} s`;
      if (s < 7200) return `${round(s / 60)} min`;
      if (s < 172_800) return `${round(s / 3600)} h`;
      return `${round(s / 86_400)} days`;
    }
    case 'payment_type':
      return setup.paymentTypes[value] ?? 'unknown';
    default:
      return Number.isInteger(value) ? String(value) : value.toFixed(3);
  }
}

interface PlainReason {
  text: string;
  direction: 'increases' | 'decreases';
  contribution: number;
  feature: string;
}

/** One row's reasons, plainly: every non-zero contribution (SHAP value × stack weight), sorted by
 *  magnitude then feature name (channel order between equals), the first `n`, each reported to
 *  1e-6 and worded from that rounded value. */
function plainReasons(setup: ReasonSetup, values: ArrayLike<number>[], phi: ArrayLike<number>[], n: number): PlainReason[] {
  const all: { feature: string; display: string; kind: string; value: number; contribution: number }[] = [];
  setup.channels.forEach((c, k) => {
    c.features.forEach((feature, f) => {
      const contribution = c.weight * phi[k]![f]!;
      if (contribution !== 0) all.push({ feature, display: c.display[f]!, kind: c.kinds[f]!, value: values[k]![f]!, contribution });
    });
  });
  all.sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution) || (a.feature < b.feature ? -1 : a.feature > b.feature ? 1 : 0));
  return all.slice(0, n).map((r) => {
    const contribution = Math.round(r.contribution * 1e6) / 1e6;
    const up = contribution >= 0;
    const text = `${r.display} (${plainValue(r.value, r.kind, setup)}) ${up ? 'added' : 'took'} ${Math.abs(contribution).toFixed(2)} ${up ? 'to' : 'from'} the log-odds of fraud`;
    return { text, direction: up ? 'increases' : 'decreases', contribution, feature: r.feature };
  });
}

/** Row `j`'s feature values and SHAP values, per channel. */
function rowOf(setup: LineSetup, r: Rows, j: number): { values: Float64Array[]; phi: Float64Array[] } {
  const widths = setup.reasons.channels.map((c) => c.features.length);
  return {
    values: widths.map((w, k) => r.values[k]!.subarray(j * w, (j + 1) * w)),
    phi: widths.map((w, k) => r.phi[k]!.subarray(j * (w + 1), (j + 1) * (w + 1))),
  };
}

const ODD_IDS = [
  '=cmd|x',
  '+1',
  '-2',
  '@SUM(A1)',
  '\tx',
  '\rx',
  'a,b',
  'say "hi"',
  'line\nbreak',
  'back\\slash',
  'ctl\u0001\u001f\u0008\u000c',
  'tx-€-日本-🙂',
  '',
  'plain',
  '\u2028sep',
  'del\u007f',
];

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
  const values = setup.reasons.channels.map((c) => {
    const w = c.features.length;
    const m = new Float64Array(n * w);
    for (let j = 0; j < n; j++) for (let f = 0; f < w; f++) m[j * w + f] = rand() < 0.6 ? pick(EDGE_VALUES[c.kinds[f]!]!) : (rand() - 0.3) * 100;
    return m;
  });
  const phi = setup.reasons.channels.map((c) => {
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

/** The rows' lines as the plain rendering makes them. */
function expected(setup: LineSetup, r: Rows): { json: string[]; csv: string[] } {
  const width = 1 + setup.channels.length;
  const json: string[] = [];
  const csv: string[] = [];
  for (let j = 0; j < r.store.length; j++) {
    const { values, phi } = rowOf(setup, r, j);
    const kept = plainReasons(setup.reasons, values, phi, setup.top);
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
      channel_scores: Object.fromEntries(setup.channels.map((c, k) => [c, r.scores[j * width + 1 + k]!])),
      top_reasons: kept.map((x) => ({ feature: x.feature, contribution: x.contribution, text: x.text })),
      label: r.store.label(j) ?? null,
    };
    json.push(`${JSON.stringify(row)}\n`);
    csv.push(csvLine(row, setup.csvChannels, setup.top));
  }
  return { json, csv };
}

/** The rows' lines from the addon, in batches of `batch`, after `base` bytes already written. */
function native(t: Test, setup: LineSetup, r: Rows, batch: number, base: number): { header: string; json: string; csv: string; starts: number[] } {
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
    const values = setup.reasons.channels.map((c, k) => r.values[k]!.subarray(from * c.features.length, to * c.features.length));
    const phi = setup.reasons.channels.map((c, k) => r.phi[k]!.subarray(from * (c.features.length + 1), to * (c.features.length + 1)));
    // Buffers too small for some batches: the lines then wait for copyInto.
    let jsonOut = Buffer.alloc(from % 2 === 0 ? 1 << 20 : 100);
    let csvOut = Buffer.alloc(1 << 20);
    const [jsonBytes, csvBytes] = lines.write(
      from + 1,
      count,
      values,
      phi,
      r.scores.subarray(from * width, to * width),
      r.codes.subarray(from * 3, to * 3),
      cols.amounts,
      cols.labels,
      cols.customers,
      cols.merchants,
      cols.idBytes,
      cols.idOffsets,
      at,
      startsOut,
      jsonOut,
      csvOut,
    );
    if (jsonBytes > jsonOut.length || csvBytes > csvOut.length) {
      t.throws(() => lines.copyInto(jsonOut, csvOut), { code: 'invalid_input' }, 'copyInto refuses a buffer too small');
      jsonOut = Buffer.alloc(jsonBytes);
      csvOut = Buffer.alloc(csvBytes);
      lines.copyInto(jsonOut, csvOut);
    }
    at += jsonBytes;
    json += jsonOut.toString('utf8', 0, jsonBytes);
    csv += csvOut.toString('utf8', 0, csvBytes);
    starts.push(...startsOut);
  }
  return { header: lines.csvHeader, json, csv, starts };
}

function compare(t: Test, setup: LineSetup, r: Rows, batch: number) {
  const want = expected(setup, r);
  const got = native(t, setup, r, batch, 1000);
  const jsonLines = got.json.split(/(?<=\n)/);
  const csvLines = got.csv.split(/(?<=\r\n)/);
  t.equal(jsonLines.length, want.json.length, 'one JSON line per row');
  t.equal(csvLines.length, want.csv.length, 'one download line per row');
  t.equal(got.header, csvHeader(setup.csvChannels, setup.top), "the download's header");
  const firstJson = want.json.findIndex((l, j) => l !== jsonLines[j]);
  t.equal(
    firstJson,
    -1,
    firstJson < 0 ? 'every JSON line as the plain rendering writes it' : `row ${firstJson + 1}:\n${jsonLines[firstJson]}\n${want.json[firstJson]}`,
  );
  const firstCsv = want.csv.findIndex((l, j) => l !== csvLines[j]);
  t.equal(
    firstCsv,
    -1,
    firstCsv < 0
      ? 'every download line as the plain rendering writes it'
      : `row ${firstCsv + 1}:\n${JSON.stringify(csvLines[firstCsv])}\n${JSON.stringify(want.csv[firstCsv])}`,
  );
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
  const names = [
    'amount',
    'customer_prior_count',
    'amount_to_customer_mean',
    'merchant_known_fraud_rate',
    'is_night',
    'hour',
    'weekday',
    'log_seconds_since_customer_last',
    'payment_type',
    'log_amount',
    'mean_amount_24h_with_this',
    'odd "name", with\\escapes\u0001',
  ];
  const base = lineSetup(bundle, []);
  const setup: LineSetup = {
    ...base,
    reasons: reasonSetup([
      { weight: 1, features: names.slice(0, 6) },
      { weight: 1, features: names.slice(6) },
    ]),
    channels: ['tabular', 'graph'],
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
    lines.write(
      1,
      over.count ?? 10,
      rows.values,
      rows.phi,
      over.scores ?? rows.scores,
      over.codes ?? rows.codes,
      cols.amounts,
      cols.labels,
      over.customers ?? cols.customers,
      cols.merchants,
      cols.idBytes,
      cols.idOffsets,
      0,
      new Float64Array(10),
      Buffer.alloc(1 << 16),
      Buffer.alloc(1 << 16),
    );
  t.throws(() => write({ scores: rows.scores.subarray(0, 5) }), { code: 'invalid_input' }, 'scores too short');
  t.throws(() => write({ count: 11 }), { code: 'invalid_input' }, 'more rows than the columns hold');
  t.throws(() => write({ codes: new Uint8Array(30).fill(9) }), { code: 'invalid_input' }, 'a band code with no name');
  t.throws(() => write({ customers: new Int32Array(10).fill(1e6) }), { code: 'invalid_input' }, 'a customer index past the ids');
  const first = setup.reasons.channels[0]!;
  t.throws(
    () =>
      resultLines({
        ...setup,
        reasons: { ...setup.reasons, channels: [{ ...first, kinds: first.kinds.map(() => 'colour') }, ...setup.reasons.channels.slice(1)] },
      }),
    { code: 'invalid_input' },
    'an unknown kind of value',
  );
  t.throws(() => resultLines({ ...setup, channels: setup.channels.slice(1) }), { code: 'invalid_input' }, 'fewer channel names than channels');
  t.doesNotThrow(() => write({}), 'the same call with consistent arrays');
  // A single row's reasons: the same codes through explain.ts's addon object.
  const single = reasons(setup.reasons);
  t.throws(() => single.top(new Float64Array(single.rowWidth - 1), 3, new Float64Array(16)), { code: 'invalid_input' }, 'a row of the wrong width');
  t.throws(() => single.top(new Float64Array(0), 3, new Float64Array(16)), { code: 'invalid_input' }, 'an empty row');
  const ranked = new Float64Array(single.rowWidth).fill(1);
  t.throws(() => single.top(ranked, 3, new Float64Array(15)), { code: 'invalid_input' }, 'no room for the reasons found');
  t.equal(single.top(ranked, 3, new Float64Array(16)).length > 0, true, 'room for them');
  t.throws(() => reasons({ ...setup.reasons, channels: [{ ...first, display: [] }] }), { code: 'invalid_input' }, 'names that do not match the features');
});

t.test("a single request's reasons are a batch row's: same features, contributions, texts and order", async (t) => {
  const rows = makeRows(lineSetup(bundle, []), 1500, 14, [0.5, 1, 0.25, 0.0000015]);
  for (const top of [3, 5]) {
    const setup = lineSetup(bundle, rows.store.entityNames, top);
    const got = native(t, setup, rows, 500, 0);
    const batchRows = got.json
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ResultRow);
    // The scorer's way: one list of channels over buffers rewritten for every request.
    const explained: ChannelExplanation[] = setup.reasons.channels.map((c, _k) => ({
      features: c.features,
      weight: c.weight,
      values: new Float64Array(c.features.length),
      phi: new Float64Array(c.features.length + 1),
    }));
    let differ = -1;
    let plainDiffer = -1;
    for (let j = 0; j < rows.store.length; j++) {
      const { values, phi } = rowOf(setup, rows, j);
      explained.forEach((e, k) => {
        (e.values as Float64Array).set(values[k]!);
        (e.phi as Float64Array).set(phi[k]!);
      });
      const single = topReasons(explained, top);
      const fromBatch = batchRows[j]!.top_reasons;
      const same =
        single.length === fromBatch.length &&
        single.every((r, i) => r.feature === fromBatch[i]!.feature && r.contribution === fromBatch[i]!.contribution && r.text === fromBatch[i]!.text);
      if (!same && differ < 0) differ = j;
      if (JSON.stringify(single) !== JSON.stringify(plainReasons(setup.reasons, values, phi, top)) && plainDiffer < 0) plainDiffer = j;
    }
    t.equal(differ, -1, `top ${top}: every row's single-request reasons equal its batch line's`);
    t.equal(plainDiffer, -1, `top ${top}: and the plain rendering's, direction and key order included`);
  }
  const reason = topReasons([{ features: ['amount'], weight: 2, values: [250], phi: [0.415, -1] }], 5);
  t.same(reason, [{ text: 'Amount (250.00) added 0.83 to the log-odds of fraud', direction: 'increases', contribution: 0.83, feature: 'amount' }]);
  t.same(Object.keys(reason[0]!), ['text', 'direction', 'contribution', 'feature'], "the score response's keys, in its order");
});

t.test('a list of channels whose weights or features change is set up again', async (t) => {
  const list: ChannelExplanation[] = [{ features: ['amount', 'hour'], weight: 1, values: [10, 12.5], phi: [0.5, -0.75, -2] }];
  t.same(
    topReasons(list, 2).map((r) => r.text),
    ['Hour of day (UTC) (12:30) took 0.75 from the log-odds of fraud', 'Amount (10.00) added 0.50 to the log-odds of fraud'],
  );
  list[0]!.weight = -2;
  t.same(
    topReasons(list, 2).map((r) => r.text),
    ['Hour of day (UTC) (12:30) added 1.50 to the log-odds of fraud', 'Amount (10.00) took 1.00 from the log-odds of fraud'],
  );
  list[0]!.features = ['weekday', 'is_night'];
  t.same(
    topReasons(list, 1).map((r) => r.text),
    ['Night-time payment (yes) added 1.50 to the log-odds of fraud'],
  );
});

t.test('other numbers of reasons: the header and every download line with that many reason cells', async (t) => {
  for (const top of [0, 1, 2, 5]) {
    const rows = makeRows(lineSetup(bundle, []), 400, 20 + top, [0.5, 1]);
    const setup = lineSetup(bundle, rows.store.entityNames, top);
    t.equal(resultLines(setup).top, top, `top ${top}: the writer keeps the setting`);
    compare(t, setup, rows, 128);
  }
});
