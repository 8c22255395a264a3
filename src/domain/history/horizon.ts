// The horizon of a history: how far back before its newest transaction it holds transactions one by
// one (WINDOW_HORIZON_MS), the error for a transaction older than that (HorizonError), and what
// stands for the transactions before it in a loaded history (EntityTotals, as the database keeps
// them). Their own module because the series, the label series, the History class and the live
// store (which loads a history from that far back, the rest as totals) all reckon with them.

/** The longest look-back of any windowed feature (30 days) plus a day's margin. A series drops
 *  entries older than this before the newest transaction: no query can reach them, since queries
 *  come at or after the newest transaction (a history is scored at its newest), and all-time counts
 *  and sums survive in the series' running totals. A query further back throws instead of answering
 *  wrongly, and so does adding a transaction at or before an entry already dropped (HorizonError):
 *  its place among the dropped entries is gone. */
export const WINDOW_HORIZON_MS = 31 * 86_400_000;

/** A transaction too old to place: at or before entries a series has dropped past the horizon.
 *  The history is unchanged; loading it afresh (in time order) places the transaction. */
export class HorizonError extends Error {
  constructor(time: number, newest: number, what = 'transaction') {
    const at = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : String(t));
    super(
      `${what} at ${at(time)} is older than the history's ${WINDOW_HORIZON_MS / 86_400_000}-day horizon` +
        `${Number.isFinite(newest) ? ` (newest transaction ${at(newest)})` : ''}: it cannot be placed; load the history afresh`,
    );
    this.name = 'HorizonError';
  }
}

/** An entity's all-time totals, as the database keeps them for a loaded history (`finishLoad`). */
export interface EntityTotals {
  /** `field`: a key field's value, `name=value` (key-fields.ts). */
  kind: 'customer' | 'merchant' | 'channel' | 'field';
  key: string;
  transactions: number;
  amountSum: number;
  amountSquares: number;
  /** The newest transaction's time. */
  last: number;
  /** Transactions with an outcome, and the frauds among them. */
  labels: number;
  frauds: number;
  /** When the earliest fraud became known (customers with frauds). */
  firstFraudKnown: number | null;
}
