// Amounts are kept to six decimal places (a millionth of the currency unit) wherever they enter:
// the score request and every CSV row (datasets, history imports). No payment is finer, and the
// stored running totals square each amount, which for a vanishingly small one (1e-249, say)
// underflows PostgreSQL's double precision and fails the whole write.

/** Decimal places an amount keeps. */
export const AMOUNT_DECIMALS = 6;
const SCALE = 10 ** AMOUNT_DECIMALS;

/** The amount as kept: rounded to AMOUNT_DECIMALS places. */
export function keptAmount(amount: number): number {
  return Math.round(amount * SCALE) / SCALE;
}
