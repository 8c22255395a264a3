// A backtest's report, tallied one logged transaction at a time (memory does not grow with the
// number of transactions: only per-day counts and a few examples are kept). For each transaction
// the caller says whether the rule matched what its decision saw, with the lists as they were then
// (jobs/backtest-job.ts); the tally counts the matches, their outcomes as known now, the money,
// the decisions the rule would have changed, and keeps examples with the values the rule read.
//
// Precision is the share of fraud among the matched transactions that have an outcome; recall the
// share of all fraud reported in the period that the rule matched. Both read outcomes as they are
// known today, so the report warns when they cannot be trusted yet: outcomes arrive late (the
// newest transactions have few), and a payment that was blocked rarely gets one at all (an allow
// rule's matches that were blocked show as unknown, never as legitimate).

import { decide, decidingAction, type Decision } from './decide.ts';
import type { RuleAction } from './expression.ts';

/** Examples kept per outcome. */
export const EXAMPLES_PER_OUTCOME = 10;

/** One logged transaction as the tally reads it. */
export interface LoggedRow {
  transaction_id: string;
  time: number;
  amount: number;
  /** The decision answered, the thresholds' own, and the action of the rule that decided then. */
  decision: Decision;
  model_decision: Decision;
  rule_action: RuleAction | null;
  /** 1 fraud, 0 legitimate, null unknown (as known now). */
  label: 0 | 1 | null;
}

export interface Example {
  transaction_id: string;
  time: string;
  amount: number;
  decision: Decision;
  would_be: Decision;
  values: Record<string, unknown>;
}

/** The figures of one rule version over the period. */
export interface Figures {
  matched: number;
  errors: number;
  /** Transactions that did not carry a field of the organization's the rule reads (not matched). */
  without_fields: number;
  outcomes: { fraud: number; legit: number; unknown: number };
  precision: number | null;
  recall: number | null;
  fraud_amount: number;
  legit_amount: number;
  /** Decisions the rule would change against the logged ones, as `from->to`. */
  changes: Record<string, number>;
  per_day: { day: string; matched: number; fraud: number; legit: number }[];
}

export class Tally {
  readonly action: RuleAction;
  private readonly recentFrom: number;

  private matched = 0;
  private errors = 0;
  private withoutFields = 0;
  private fraud = 0;
  private legit = 0;
  private unknown = 0;
  private fraudAmount = 0;
  private legitAmount = 0;
  private readonly changes = new Map<string, number>();
  private readonly days = new Map<string, { matched: number; fraud: number; legit: number }>();
  /** Matches blocked when they were decided; matches since `recentFrom`, and those without an
   *  outcome (the warnings'). */
  private blocked = 0;
  private recentMatched = 0;
  private recentUnknown = 0;
  readonly examples: Record<'fraud' | 'legit' | 'unknown', Example[]> = { fraud: [], legit: [], unknown: [] };

  /** `recentFrom`: outcomes of transactions from then on are still arriving (epoch ms). */
  constructor(action: RuleAction, recentFrom: number) {
    this.action = action;
    this.recentFrom = recentFrom;
  }

  /** A transaction the rule could not be evaluated on (a missing value): not a match. */
  error(): void {
    this.errors += 1;
  }

  /** A transaction that did not carry a field of the organization's the rule reads: not a match. */
  missingField(): void {
    this.withoutFields += 1;
  }

  /** A transaction the rule matched; `values` builds the values it read (for an example). */
  match(row: LoggedRow, values: () => Record<string, unknown>): void {
    this.matched += 1;
    const outcome = row.label === 1 ? 'fraud' : row.label === 0 ? 'legit' : 'unknown';
    if (outcome === 'fraud') {
      this.fraud += 1;
      this.fraudAmount += row.amount;
    } else if (outcome === 'legit') {
      this.legit += 1;
      this.legitAmount += row.amount;
    } else this.unknown += 1;
    if (row.decision === 'block') this.blocked += 1;
    if (row.time >= this.recentFrom) {
      this.recentMatched += 1;
      if (outcome === 'unknown') this.recentUnknown += 1;
    }
    const wouldBe = decide(row.model_decision, decidingAction(row.rule_action ? [row.rule_action, this.action] : [this.action]));
    if (wouldBe !== row.decision) {
      const key = `${row.decision}->${wouldBe}`;
      this.changes.set(key, (this.changes.get(key) ?? 0) + 1);
    }
    const day = new Date(row.time).toISOString().slice(0, 10);
    let d = this.days.get(day);
    if (!d) this.days.set(day, (d = { matched: 0, fraud: 0, legit: 0 }));
    d.matched += 1;
    if (outcome === 'fraud') d.fraud += 1;
    else if (outcome === 'legit') d.legit += 1;
    const list = this.examples[outcome];
    if (list.length < EXAMPLES_PER_OUTCOME)
      list.push({
        transaction_id: row.transaction_id,
        time: new Date(row.time).toISOString(),
        amount: row.amount,
        decision: row.decision,
        would_be: wouldBe,
        values: values(),
      });
  }

  /** The figures, given all fraud reported in the period (recall's denominator). */
  figures(allFraud: number): Figures {
    const labelled = this.fraud + this.legit;
    return {
      matched: this.matched,
      errors: this.errors,
      without_fields: this.withoutFields,
      outcomes: { fraud: this.fraud, legit: this.legit, unknown: this.unknown },
      precision: labelled ? this.fraud / labelled : null,
      recall: allFraud ? this.fraud / allFraud : null,
      fraud_amount: round2(this.fraudAmount),
      legit_amount: round2(this.legitAmount),
      changes: Object.fromEntries([...this.changes].sort(([a], [b]) => (a < b ? -1 : 1))),
      per_day: [...this.days].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, d]) => ({ day, ...d })),
    };
  }

  /** The figures with what makes them less certain, in words (`labelDelayDays`: how long outcomes
   *  take to arrive). */
  report(allFraud: number, labelDelayDays: number): Figures & { warnings: string[] } {
    const figures = this.figures(allFraud);
    return {
      ...figures,
      warnings: backtestWarnings({
        action: this.action,
        figures,
        matchedBlockedLogged: this.blocked,
        recentMatched: this.recentMatched,
        recentUnknown: this.recentUnknown,
        labelDelayDays,
      }),
    };
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** What a backtest over the period should warn about, in words. */
function backtestWarnings(o: {
  action: RuleAction;
  figures: Figures;
  matchedBlockedLogged: number;
  recentMatched: number;
  recentUnknown: number;
  labelDelayDays: number;
}): string[] {
  const w: string[] = [];
  const { figures: f } = o;
  if (o.recentMatched > 0 && o.recentUnknown > 0) {
    w.push(
      `Outcomes arrive late: ${o.recentUnknown} of the ${o.recentMatched} matched transactions from the last ${o.labelDelayDays} days have none yet, so precision and recall there will still change.`,
    );
  }
  if (o.action === 'allow' && o.matchedBlockedLogged > 0) {
    w.push(
      `${o.matchedBlockedLogged} of the matched transactions were blocked when they were decided: a blocked payment rarely gets an outcome, so how many of them were legitimate is not known, and this allow rule's precision rests on the others.`,
    );
  }
  const labelled = f.outcomes.fraud + f.outcomes.legit;
  if (f.matched > 0 && labelled < f.matched / 2)
    w.push(`Only ${labelled} of the ${f.matched} matched transactions have an outcome: precision is measured on those alone.`);
  if (f.without_fields > 0)
    w.push(
      `${f.without_fields} transaction(s) did not carry a field the rule reads (sent without it, or before it was sent at all); they count as not matched, so the figures speak for the transactions that carried it.`,
    );
  if (f.errors > 0) w.push(`The rule could not be evaluated on ${f.errors} transaction(s) (a value it reads was missing); they count as not matched.`);
  return w;
}
