// A drift report (model/drift.ts): whether a model's answers on some rows (a scoring job's file, a
// week of an organization's traffic) can be trusted, and why. Documented here field by field, with
// the thresholds and sentences the verdict goes by (model/drift-limits.ts); the report the model's
// code counts must have exactly this shape, or the check at the end does not compile.

import { z } from 'zod';
import {
  DEGRADED_WARNING,
  DRIFT_SAMPLE,
  DRIFT_WARNING,
  MIN_OUTCOMES,
  MIN_ROWS,
  OUT_OF_RANGE_SHARE,
  PSI_MAJOR,
  PSI_MODERATE,
  UNSEEN_SHARE,
} from '../model/drift-limits.ts';
import type { DriftReport as CountedReport } from '../model/drift.ts';

/** Whether A and B are the same type (each assignable to the other). */
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const MeasuredPerformance = z
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

export const DriftReport = z
  .object({
    verdict: z
      .enum(['ok', 'shifted', 'degraded'])
      .describe(
        `\`degraded\`: measured on the outcomes, average precision or calibration is worse than the test figures allow. \`shifted\` (no outcomes): the scores moved (PSI ≥ ${PSI_MAJOR} over the answer intervals), unseen payment types or locations are on ≥ ${100 * UNSEEN_SHARE} % of rows, or the amount moved (PSI ≥ ${PSI_MAJOR}, or ≥ ${100 * OUT_OF_RANGE_SHARE} % of rows beyond the training range). \`ok\` otherwise`,
      ),
    basis: z
      .enum(['outcomes', 'scores', 'categories', 'features'])
      .describe(
        'What decided the verdict: the outcomes when there are enough, else the first check that found a shift (scores, then categories, then features); `scores` when none did',
      ),
    reasons: z
      .array(z.string())
      .describe('What made the verdict (empty when ok): `average_precision`, `calibration`, `score_psi`, `unseen_categories`, `feature:<name>`'),
    signals: z
      .array(z.string())
      .describe('What the checks without outcomes found (`score_psi`, `unseen_categories`, `feature:<name>`), listed even when outcomes decide'),
    warning: z.string().nullable().describe(`When shifted: "${DRIFT_WARNING}"; when degraded: "${DEGRADED_WARNING}"; with the reasons. Null when ok`),
    rows: z
      .number()
      .int()
      .describe(`Rows counted (an even sample of at most ${DRIFT_SAMPLE.toLocaleString('en')})`),
    score_psi: z
      .number()
      .describe(
        `Population stability index of the scores against validation, over the intervals between the model's thresholds and band edges (${PSI_MODERATE} moderate, ${PSI_MAJOR} major)`,
      ),
    features: z
      .array(
        z.object({
          feature: z.string(),
          psi: z.number(),
          out_of_range_share: z.number().describe('Share of rows beyond the range seen in training'),
          depends_on: z
            .enum(['payment', 'period', 'history'])
            .describe(
              '`payment`: the payment alone; `period`: the hours and days the rows cover; `history`: how much history there is and how many parties share it',
            ),
          in_verdict: z.boolean().describe('Whether it can decide the verdict (the amount features only)'),
        }),
      )
      .describe('Every feature, largest PSI first'),
    unseen_categories: z
      .object({ payment_type: z.array(z.string()), location: z.array(z.string()) })
      .describe('Values never seen in training, most frequent first (at most 20 each)'),
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
    measured: MeasuredPerformance.nullable(),
  })
  .describe(
    `Whether the model's answers on these rows can be trusted, against its reference and test figures (null with fewer than ${MIN_ROWS} rows, or when the model has no reference)`,
  );
export type DriftReport = z.infer<typeof DriftReport>;
// The schema is the report's shape exactly, or this does not compile.
true satisfies SameType<DriftReport, CountedReport>;
