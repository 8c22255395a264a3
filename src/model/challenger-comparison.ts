// A challenger against the active model on the organization's own outcomes: the same transactions,
// scored by both when they were recorded (the challenger in shadow), each figure with its 95 %
// paired bootstrap interval and the interval of the difference. Only transactions older than the
// label delay count (a fraud younger than that may not be reported yet), with the outcomes known
// now: a transaction without a fraud report by then counts as legitimate. A verdict says "better"
// only when some figure is better beyond its interval and none worse, "worse" the other way round,
// and "no_difference" otherwise (including when figures disagree), never from a point estimate.

import {
  averagePrecisionStatistic,
  calibrationErrorStatistic,
  cardPrecisionStatistic,
  pairedBootstrap,
  rocAucStatistic,
  type Interval,
  type Statistic,
} from './bootstrap.ts';

/** One transaction both models scored. */
export interface ShadowedRow {
  /** Epoch ms. */
  time: number;
  amount: number;
  /** The card (the customer) the handbook's card precision ranks. */
  card: string;
  label: 0 | 1;
  active: { score: number; decision: string };
  challenger: { score: number; decision: string };
}

export interface Figure {
  active: Interval;
  challenger: Interval;
  /** Challenger minus active. */
  difference: Interval;
  /** Which model the interval of the difference favours, when it excludes no difference. */
  favours: 'challenger' | 'active' | null;
}

export interface Comparison {
  transactions: number;
  frauds: number;
  average_precision: Figure | null;
  roc_auc: Figure | null;
  card_precision_at_k: (Figure & { k: number }) | null;
  /** Expected calibration error (10 bins): lower is better. */
  calibration_error: Figure;
  decisions_changed: { count: number; share: number; by_change: Record<string, number> };
  money: { fraud_blocked: Figure; legit_blocked: Figure };
  verdict: 'better' | 'no_difference' | 'worse';
  evidence: string[];
}

/** Rows as columns, as they are sent to a worker thread: the typed arrays are moved, not copied,
 *  and cloning them and one array of cards costs a small part of what cloning the rows' objects
 *  would, on the event loop that answers requests. Decisions are indices into `decisions`. */
export interface ShadowedColumns {
  time: Float64Array;
  amount: Float64Array;
  label: Uint8Array;
  card: string[];
  activeScore: Float64Array;
  challengerScore: Float64Array;
  activeDecision: Uint8Array;
  challengerDecision: Uint8Array;
  decisions: string[];
}

export function shadowedColumns(rows: readonly ShadowedRow[]): ShadowedColumns {
  const n = rows.length;
  const decisions: string[] = [];
  const indexOf = (d: string) => {
    const i = decisions.indexOf(d);
    return i >= 0 ? i : decisions.push(d) - 1;
  };
  const c: ShadowedColumns = {
    time: new Float64Array(n),
    amount: new Float64Array(n),
    label: new Uint8Array(n),
    card: new Array<string>(n),
    activeScore: new Float64Array(n),
    challengerScore: new Float64Array(n),
    activeDecision: new Uint8Array(n),
    challengerDecision: new Uint8Array(n),
    decisions,
  };
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    c.time[i] = r.time;
    c.amount[i] = r.amount;
    c.label[i] = r.label;
    c.card[i] = r.card;
    c.activeScore[i] = r.active.score;
    c.challengerScore[i] = r.challenger.score;
    c.activeDecision[i] = indexOf(r.active.decision);
    c.challengerDecision[i] = indexOf(r.challenger.decision);
  }
  return c;
}

/** The typed arrays of `c`, to move with it to another thread. */
export const columnBuffers = (c: ShadowedColumns): ArrayBuffer[] =>
  [c.time, c.amount, c.label, c.activeScore, c.challengerScore, c.activeDecision, c.challengerDecision].map((a) => a.buffer as ArrayBuffer);

export function shadowedRows(c: ShadowedColumns): ShadowedRow[] {
  return Array.from(c.time, (time, i) => ({
    time,
    amount: c.amount[i]!,
    label: c.label[i] as 0 | 1,
    card: c.card[i]!,
    active: { score: c.activeScore[i]!, decision: c.decisions[c.activeDecision[i]!]! },
    challenger: { score: c.challengerScore[i]!, decision: c.decisions[c.challengerDecision[i]!]! },
  }));
}

export interface ComparisonOptions {
  resamples: number;
  seed: number;
  /** Cards ranked per day for card precision (the handbook's 100). */
  k: number;
}

export const COMPARISON_DEFAULTS: ComparisonOptions = { resamples: 500, seed: 1, k: 100 };

const DAY_MS = 86_400_000;

function figure(units: number, challenger: Statistic, active: Statistic, o: ComparisonOptions, lowerIsBetter = false): Figure {
  const p = pairedBootstrap(units, challenger, active, { resamples: o.resamples, seed: o.seed });
  const d = p.difference;
  const better = lowerIsBetter ? d.high < 0 : d.low > 0;
  const worse = lowerIsBetter ? d.low > 0 : d.high < 0;
  return { active: p.b, challenger: p.a, difference: d, favours: better ? 'challenger' : worse ? 'active' : null };
}

/** Σ amount over rows with `label` that `decision(row)` blocks, weighted. */
function blockedAmount(rows: readonly ShadowedRow[], label: 0 | 1, side: 'active' | 'challenger'): Statistic {
  return (w) => {
    let sum = 0;
    for (let i = 0; i < rows.length; i++) if (rows[i]!.label === label && rows[i]![side].decision === 'block') sum += w[i]! * rows[i]!.amount;
    return sum;
  };
}

const round = (x: number, digits = 4) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);
const describe = (name: string, f: Figure) =>
  `${name} ${f.difference.value >= 0 ? '+' : ''}${round(f.difference.value)} [${round(f.difference.low)}, ${round(f.difference.high)}]`;

/** The comparison of `rows` (at least one), figures the rows cannot give (no fraud) left null. */
export function compareModels(rows: readonly ShadowedRow[], options: Partial<ComparisonOptions> = {}): Comparison {
  const o = { ...COMPARISON_DEFAULTS, ...options };
  const n = rows.length;
  const labels = Uint8Array.from(rows, (r) => r.label);
  const frauds = labels.reduce((a, b) => a + b, 0);
  const a = Float64Array.from(rows, (r) => r.active.score);
  const c = Float64Array.from(rows, (r) => r.challenger.score);
  const both = frauds > 0 && frauds < n;
  const average_precision = frauds > 0 ? figure(n, averagePrecisionStatistic(c, labels), averagePrecisionStatistic(a, labels), o) : null;
  const roc_auc = both ? figure(n, rocAucStatistic(c, labels), rocAucStatistic(a, labels), o) : null;
  let card_precision_at_k: Comparison['card_precision_at_k'] = null;
  if (frauds > 0) {
    const cards = rows.map((r) => r.card);
    const days = rows.map((r) => Math.floor(r.time / DAY_MS));
    const cc = cardPrecisionStatistic(cards, days, c, labels, o.k);
    const ca = cardPrecisionStatistic(cards, days, a, labels, o.k);
    card_precision_at_k = { ...figure(cc.units, cc.statistic, ca.statistic, o), k: o.k };
  }
  const calibration_error = figure(n, calibrationErrorStatistic(c, labels), calibrationErrorStatistic(a, labels), o, true);
  const by_change: Record<string, number> = {};
  let changed = 0;
  for (const r of rows) {
    if (r.active.decision === r.challenger.decision) continue;
    changed++;
    const key = `${r.active.decision}->${r.challenger.decision}`;
    by_change[key] = (by_change[key] ?? 0) + 1;
  }
  const money = {
    fraud_blocked: figure(n, blockedAmount(rows, 1, 'challenger'), blockedAmount(rows, 1, 'active'), o),
    legit_blocked: figure(n, blockedAmount(rows, 0, 'challenger'), blockedAmount(rows, 0, 'active'), o, true),
  };
  const ranked: [string, Figure | null][] = [
    ['average precision', average_precision],
    ['ROC AUC', roc_auc],
    [`card precision@${o.k}`, card_precision_at_k],
    ['calibration error', calibration_error],
  ];
  const better = ranked.filter(([, f]) => f?.favours === 'challenger');
  const worse = ranked.filter(([, f]) => f?.favours === 'active');
  const verdict = better.length > 0 && worse.length === 0 ? 'better' : worse.length > 0 && better.length === 0 ? 'worse' : 'no_difference';
  const evidence = [
    ...better.map(([name, f]) => `better ${describe(name, f!)}`),
    ...worse.map(([name, f]) => `worse ${describe(name, f!)}`),
    ...(better.length + worse.length === 0 ? [`no figure differs beyond its 95 % interval over ${n} transactions (${frauds} fraud)`] : []),
  ];
  return {
    transactions: n,
    frauds,
    average_precision,
    roc_auc,
    card_precision_at_k,
    calibration_error,
    decisions_changed: { count: changed, share: n ? changed / n : 0, by_change },
    money,
    verdict,
    evidence,
  };
}
