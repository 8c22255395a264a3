// The handbook's evaluation protocol (Le Borgne et al., "Reproducible Machine Learning for Credit
// Card Fraud Detection", from its published description): train on 7 days, wait the 7-day label delay, test on the next 7 days. Customers
// ("cards") already known to be compromised are removed from the test: those with a fraud in the
// training period and, for each test day d, those with a fraud on a day up to d − 8. Card
// precision@100 is, per test day, the share of truly compromised cards among the 100 cards with the
// highest maximum score that day (known cards excluded), averaged over the test days; ties between
// equal scores are broken by card id so the figure is deterministic.

export interface ProtocolRow {
  /** Day index from the dataset's first day. */
  day: number;
  customer_id: string;
  label: 0 | 1;
}

export interface ProtocolOptions {
  /** First training day (day index). */
  trainStart: number;
  trainDays: number;
  delayDays: number;
  testDays: number;
}

/** The handbook's setting: training from 2018-07-25 (day 115 of a simulation from 2018-04-01). */
export const HANDBOOK_PROTOCOL: ProtocolOptions = { trainStart: 115, trainDays: 7, delayDays: 7, testDays: 7 };

export interface ProtocolSplit {
  train: number[];
  /** Test rows whose card was not known to be compromised on their day. */
  test: number[];
  /** Test day of each test row (0-based within the test period), parallel to `test`. */
  testDay: number[];
}

/** Training and test rows of the protocol; `rows` need not be ordered. */
export function protocolSplit(rows: readonly ProtocolRow[], o: ProtocolOptions = HANDBOOK_PROTOCOL): ProtocolSplit {
  const trainEnd = o.trainStart + o.trainDays;
  const testStart = trainEnd + o.delayDays;
  const testEnd = testStart + o.testDays;
  // The earliest fraud day of each customer from the training start on (what becomes known, and when).
  const firstFraudDay = new Map<string, number>();
  rows.forEach((r) => {
    if (r.label !== 1 || r.day < o.trainStart) return;
    const d = firstFraudDay.get(r.customer_id);
    if (d === undefined || r.day < d) firstFraudDay.set(r.customer_id, r.day);
  });
  const split: ProtocolSplit = { train: [], test: [], testDay: [] };
  rows.forEach((r, i) => {
    if (r.day >= o.trainStart && r.day < trainEnd) split.train.push(i);
    else if (r.day >= testStart && r.day < testEnd) {
      const fraudDay = firstFraudDay.get(r.customer_id);
      // Known on day d when its first fraud (from the training start) is on day d − 8 or earlier.
      if (fraudDay !== undefined && fraudDay <= r.day - (o.delayDays + 1)) return;
      split.test.push(i);
      split.testDay.push(r.day - testStart);
    }
  });
  return split;
}

/** Card precision@k averaged over the test days: per day, cards ranked by their maximum score. */
export function cardPrecisionAtK(
  cards: readonly string[],
  days: readonly number[],
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  k = 100,
): { mean: number; perDay: number[] } {
  const byDay = new Map<number, Map<string, { score: number; fraud: boolean }>>();
  cards.forEach((card, i) => {
    let day = byDay.get(days[i]!);
    if (!day) byDay.set(days[i]!, (day = new Map()));
    const prev = day.get(card);
    const score = scores[i]!;
    const fraud = labels[i] === 1;
    if (!prev) day.set(card, { score, fraud });
    else {
      prev.score = Math.max(prev.score, score);
      prev.fraud ||= fraud;
    }
  });
  const perDay = [...byDay.keys()]
    .sort((a, b) => a - b)
    .map((d) => {
      const ranked = [...byDay.get(d)!].sort((a, b) => b[1].score - a[1].score || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      return ranked.slice(0, k).filter(([, v]) => v.fraud).length / k;
    });
  return { mean: perDay.reduce((a, b) => a + b, 0) / Math.max(perDay.length, 1), perDay };
}

/** The handbook's published test results (AUC ROC, average precision, card precision@100). */
export const PUBLISHED = [
  { model: 'logistic regression', roc_auc: 0.871, average_precision: 0.606, card_precision_at_100: 0.291 },
  { model: 'random forest', roc_auc: 0.867, average_precision: 0.658, card_precision_at_100: 0.287 },
  { model: 'XGBoost', roc_auc: 0.862, average_precision: 0.639, card_precision_at_100: 0.273 },
  { model: 'XGBoost, tuned (prequential)', roc_auc: 0.869, average_precision: 0.687, card_precision_at_100: 0.303 },
  { model: 'random forest, tuned (prequential)', roc_auc: 0.87, average_precision: 0.678, card_precision_at_100: 0.299 },
] as const;
