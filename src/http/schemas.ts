// The zod schemas of the HTTP surface: one schema validates a request and documents it in the
// OpenAPI reference (/api/docs), and the response schemas document (and serialise) what each route
// returns. Field rules are the ones docs/integrating.md records.

import { z } from 'zod';
import { AMOUNT_DECIMALS, keptAmount } from '../domain/amount.ts';
import { MODE_NAMES, perChannel } from '../model/bundle-types.ts';
import { DEGRADED_WARNING, DRIFT_SAMPLE, DRIFT_WARNING, MIN_OUTCOMES, MIN_ROWS, OUT_OF_RANGE_SHARE, PSI_MAJOR, PSI_MODERATE, UNSEEN_SHARE, type DriftReport } from '../model/drift.ts';

/** Text that is stored: PostgreSQL's text cannot hold a NUL character, so none is accepted. */
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

/** One number per channel (scores, attribution). */
export const Channels = z.object(perChannel(z.number()));
/** One reason of a decision (src/scoring/explain.ts). */
export const ReasonSchema = z.object({ text: z.string(), direction: z.enum(['increases', 'decreases']), contribution: z.number(), feature: z.string() });
export type Reason = z.infer<typeof ReasonSchema>;

export const RuleMatchSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().int(),
  action: z.enum(['allow', 'block', 'review']),
  status: z.enum(['active', 'shadow']),
  applied: z.boolean(),
});
export type RuleMatch = z.infer<typeof RuleMatchSchema>;

export const ScoreResponse = z.object({
  transaction_id: z.string(),
  risk_score: z.number().describe('Calibrated probability of fraud'),
  risk_band: z.enum(['low', 'medium', 'high', 'critical']),
  decision: z.enum(['approve', 'review', 'block']),
  mode: z.enum(MODE_NAMES),
  model_id: z.string(),
  model_version: z.string(),
  path: z.enum(['MODEL', 'COLD_START']),
  rules: z.array(RuleMatchSchema).optional().describe("Every rule of the organization that matched, in name order (`POST /api/v1/risk/score` only: the public sandbox has no rules). `applied`: it made the decision (an active rule of the deciding action); shadow rules are recorded, never applied."),
  review_threshold: z.number(),
  block_threshold: z.number(),
  channel_scores: Channels.describe("Calibrated probability from each channel's evidence, the others at their average"),
  channel_attribution: Channels.describe("Each channel's signed share of how far the stacked log-odds moved from the average"),
  reasons: z.array(ReasonSchema),
  entity_history: z.record(z.string(), z.object({ role: z.enum(['customer', 'merchant', 'channel']), prior_transactions: z.number().int(), is_new: z.boolean() })),
  graph_evidence: z.record(
    z.string(),
    z.array(
      z.object({
        transaction_id: z.string(),
        time: z.string(),
        amount: z.number(),
        source: z.string(),
        target: z.string(),
        relation: z.enum(['same_customer', 'same_merchant', 'same_channel']),
        outcome: z.enum(['fraud', 'legit', 'unknown']),
      }),
    ),
  ),
  related_ring: z
    .object({ ring_id: z.string(), window_start: z.string(), window_end: z.string(), matched_entity: z.string(), role: z.enum(['merchant', 'channel']), members: z.number().int(), fraud_rate: z.number() })
    .nullable(),
  stages: z.array(z.object({ name: z.string(), ms: z.number() })),
  latency_ms: z.number(),
  notes: z.array(z.string()),
});
export type ScoreResponse = z.infer<typeof ScoreResponse>;

export const ErrorResponse = z.object({
  detail: z
    .object({
      message: z.string(),
      reason: z.string(),
      fix: z.string(),
      fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      retry_after_seconds: z.number().optional(),
      request_id: z.string().optional().describe('The request id, as in the Request-Id header: the caller\'s X-Request-Id when it is 1–128 visible ASCII characters, otherwise generated; quote it when reporting a problem'),
    })
    .passthrough(),
});

export const ModelIdParams = z.object({ id: z.string().min(1).max(200) });

/** Whether A and B are the same type (each assignable to the other). */
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const MeasuredPerformanceSchema = z
  .object({
    rows: z.number().int().describe('Rows with an outcome'),
    fraud: z.number().int(),
    legit: z.number().int(),
    roc_auc: z.number(),
    average_precision: z.number(),
    expected_calibration_error: z.number(),
    precision: z.number().nullable().describe("Of flagging (review or block) at the mode's thresholds; null when nothing was flagged"),
    recall: z.number(),
    allowed: z
      .object({
        average_precision_min: z.number().describe("The test split's lower 95 % bound, less this sample's own margin"),
        expected_calibration_error_max: z.number().describe("The test split's upper 95 % bound, plus the error chance alone gives these scores"),
      })
      .nullable()
      .describe('What the test figures allow on this many outcomes (null when the model has no test figures, and nothing is decided)'),
  })
  .describe(`Measured on the rows' own outcomes (null without at least ${MIN_OUTCOMES} fraud and ${MIN_OUTCOMES} legitimate ones)`);

/** A drift report (model/drift.ts's DriftReport) as the API's reference documents it. */
export const DriftReportSchema = z
  .object({
    verdict: z
      .enum(['ok', 'shifted', 'degraded'])
      .describe(`\`degraded\`: measured on the outcomes, average precision or calibration is worse than the test figures allow. \`shifted\` (no outcomes): the scores moved (PSI ≥ ${PSI_MAJOR} over the answer intervals), unseen payment types or locations are on ≥ ${100 * UNSEEN_SHARE} % of rows, or the amount moved (PSI ≥ ${PSI_MAJOR}, or ≥ ${100 * OUT_OF_RANGE_SHARE} % of rows beyond the training range). \`ok\` otherwise`),
    basis: z.enum(['outcomes', 'scores', 'categories', 'features']).describe('What decided the verdict: the outcomes when there are enough, else the first check that found a shift (scores, then categories, then features); `scores` when none did'),
    reasons: z.array(z.string()).describe('What made the verdict (empty when ok): `average_precision`, `calibration`, `score_psi`, `unseen_categories`, `feature:<name>`'),
    signals: z.array(z.string()).describe('What the checks without outcomes found (`score_psi`, `unseen_categories`, `feature:<name>`), listed even when outcomes decide'),
    warning: z.string().nullable().describe(`When shifted: "${DRIFT_WARNING}"; when degraded: "${DEGRADED_WARNING}"; with the reasons. Null when ok`),
    rows: z.number().int().describe(`Rows counted (an even sample of at most ${DRIFT_SAMPLE.toLocaleString('en')})`),
    score_psi: z.number().describe(`Population stability index of the scores against validation, over the intervals between the model's thresholds and band edges (${PSI_MODERATE} moderate, ${PSI_MAJOR} major)`),
    features: z
      .array(
        z.object({
          feature: z.string(),
          psi: z.number(),
          out_of_range_share: z.number().describe('Share of rows beyond the range seen in training'),
          depends_on: z.enum(['payment', 'period', 'history']).describe('`payment`: the payment alone; `period`: the hours and days the rows cover; `history`: how much history there is and how many parties share it'),
          in_verdict: z.boolean().describe('Whether it can decide the verdict (the amount features only)'),
        }),
      )
      .describe('Every feature, largest PSI first'),
    unseen_categories: z.object({ payment_type: z.array(z.string()), location: z.array(z.string()) }).describe('Values never seen in training, most frequent first (at most 20 each)'),
    unseen_share: z.number().describe('Share of rows with an unseen payment type or location'),
    out_of_range_share: z.number().describe('Share of rows with a feature in the verdict beyond its training range'),
    estimated: z
      .object({
        fraud_rate: z.number().describe('Mean calibrated score'),
        flagged_share: z.number().describe('Share of rows flagged (review or block)'),
        precision: z.number().nullable().describe('Mean score of the flagged rows (null when none)'),
        recall: z.number().nullable().describe("Flagged rows' share of the summed scores (null when every score is 0)"),
      })
      .describe('What the calibrated scores promise, if they are right: no outcome is used'),
    measured: MeasuredPerformanceSchema.nullable(),
  })
  .describe(`Whether the model's answers on these rows can be trusted, against its reference and test figures (null with fewer than ${MIN_ROWS} rows, or when the model has no reference)`);
// The schema is the report's shape exactly, or this does not compile.
true satisfies SameType<z.infer<typeof DriftReportSchema>, DriftReport>;
