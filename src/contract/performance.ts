// How the model does on an organization's own traffic, week by week (GET
// /api/organizations/{id}/performance): volume, review and block rates and score quantiles of the
// scored transactions, each mode's precision and recall on those with an outcome, and each week's
// drift. app/decisions/performance.ts measures the weeks with these types; the dashboard's overview
// draws them.

import { z } from 'zod';
import { MODE_NAMES } from '../model/bundle-types.ts';
import { DriftReport } from './drift.ts';

const Rate = z.number().nullable();
/** One mode's figures in a week, on the transactions with a reported outcome. */
export const ModePerformance = z.object({
  review_threshold: z.number(),
  block_threshold: z.number(),
  precision: Rate.describe('Of blocking (score at or above the block threshold)'),
  recall: Rate,
  review_precision: Rate.describe('Of flagging (at or above the review threshold: review or block)'),
  review_recall: Rate,
});
export type ModePerformance = z.infer<typeof ModePerformance>;
export const Week = z.object({
  week: z.string().describe('ISO week, e.g. 2026-W47'),
  week_start: z.string(),
  transactions: z.number().int(),
  review_rate: Rate,
  block_rate: Rate,
  score_quantiles: z.record(z.string(), z.number()).nullable().describe('Risk score at p10, p25, p50, p75, p90, p99'),
  labelled: z.number().int().describe('Transactions with a reported outcome'),
  fraud: z.number().int(),
  by_mode: z.record(z.enum(MODE_NAMES), ModePerformance),
  roc_auc: Rate,
  average_precision: Rate,
  drift: DriftReport.nullable(),
});
export type Week = z.infer<typeof Week>;
export const Performance = z.object({ organization_id: z.string(), model_id: z.string(), min_labelled: z.number().int(), weeks: z.array(Week) });
export type Performance = z.infer<typeof Performance>;
