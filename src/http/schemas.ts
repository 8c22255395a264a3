// The zod schemas of the requests that more than one route reads: each validates a request and
// documents it in the OpenAPI reference (/api/docs). What the routes answer is src/contract/'s.
// Field rules are the ones docs/integrating.md records.

import { z } from 'zod';
import { AMOUNT_DECIMALS, keptAmount } from '../domain/amount.ts';
import { MODE_NAMES } from '../model/bundle-types.ts';

/** The error body (contract/errors.ts), for the HTTP files that take it from here. */
export { ErrorResponse } from '../contract/errors.ts';

/** Text that is stored: PostgreSQL's text cannot hold a NUL character, so none is accepted. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL character is what this rejects
export const NO_NUL = /^[^\u0000]*$/;
/** A character other than the white space `trim()` removes, spelled out rather than `\S`: the
 *  reference's pattern is read by other regular-expression engines (Python's, in schemathesis),
 *  whose `\s` is another set. */
export const NOT_ONLY_SPACE = /[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;
/** Stored text is trimmed, then must not be empty: so text of white space alone is refused, and the
 *  reference says so with a pattern (NOT_ONLY_SPACE) beside `minLength`, which white space alone
 *  would meet. (The pattern is tested after the trim, where it can only fail with the length,
 *  which stops the checks first: one problem per field.) */
export const storedText = (what: string, max: number) =>
  z
    .string()
    .trim()
    .min(1, { message: `${what} must not be empty or white space only`, abort: true })
    .max(max, `${what} is at most ${max} characters`)
    .regex(NO_NUL, `${what} must not contain a NUL character`)
    .regex(NOT_ONLY_SPACE, `${what} must not be white space only`);
const id = (what: string) => storedText(what, 200);

export const ScoreRequest = z
  .object({
    amount: z
      .number({ error: 'amount must be a number' })
      .finite()
      .min(0, 'amount must not be negative')
      .max(1e12, 'amount is implausibly large')
      .transform(keptAmount)
      .describe(`In the currency unit, kept to ${AMOUNT_DECIMALS} decimal places`),
    customer_id: id('customer_id').describe('Identifies the payer'),
    merchant_id: id('merchant_id').describe('Identifies the payee'),
    transaction_id: id('transaction_id').optional().describe("Caller's reference; generated when omitted"),
    location: storedText('location', 200).optional().describe('Recorded as `unknown` when omitted'),
    payment_type: storedText('payment_type', 100).optional().describe('Recorded as `unknown` when omitted'),
    mode: z.enum(MODE_NAMES).default('balanced').describe('Thresholds to decide with'),
    explain: z.boolean().default(true).describe('Include the explanation (reasons)'),
  })
  .strict();

export const ModelIdParams = z.object({ id: z.string().min(1).max(200) });
