// The published evaluation of the built-in model, as the public reads answer it: each mode's
// thresholds and whether it still meets its target (GET /api/risk/thresholds), and the parts of the
// model's metrics.json the metrics reads answer with (overview, charts, limitations, rings). Those
// parts are MetricsFileSchema's own (model/bundle-types.ts, which metrics.json is read with), so
// the file and the answers cannot disagree.

import { z } from 'zod';
import { MetricsFileSchema } from '../model/bundle-types.ts';

const Metrics = MetricsFileSchema.shape;
const Rate = z.number().nullable();
const ModeThresholds = z.object({
  review_threshold: z.number(),
  block_threshold: z.number(),
  target: z.object({ metric: z.string(), value: z.number() }),
  meets_target: z.boolean().nullable().describe('Null when the evaluation is unavailable'),
  measured: Rate,
  review_rate: Rate,
  block_rate: Rate,
  precision: Rate,
  recall: Rate,
  fraud_caught_per_1000: Rate,
  review_warning: z.string().nullable(),
});
export const Thresholds = z.object({
  model_id: z.string(),
  default_mode: z.string().describe('`balanced`'),
  split: z.string().describe('`test`'),
  modes: z.record(z.string(), ModeThresholds).describe('Per mode: `balanced`, `high_precision`, `high_recall`'),
  note: z.string().optional().describe('Only when the evaluation is unavailable'),
});
export type Thresholds = z.infer<typeof Thresholds>;
export const MetricsOverview = z.object({
  model_id: z.string(),
  splits: Metrics.splits,
  channel_auc: Metrics.channel_auc,
  modes: Metrics.modes,
  comparisons: Metrics.comparisons,
  seed_spread: Metrics.seed_spread.unwrap().nullable(),
  selection: z.object(Metrics.selection.unwrap().shape).nullable(),
});
export type MetricsOverview = z.infer<typeof MetricsOverview>;
export const MetricsCharts = z.object({ model_id: z.string(), ...Metrics.charts.shape });
export type MetricsCharts = z.infer<typeof MetricsCharts>;
export const MetricsLimitations = z.object({ model_id: z.string(), limitations: Metrics.limitations });
export type MetricsLimitations = z.infer<typeof MetricsLimitations>;
const RingGroup = z.object({
  ring_id: z.string(),
  window_start: z.string(),
  window_end: z.string(),
  published_at: z.string(),
  members: z.number().int(),
  customers: z.number().int(),
  customer_ids: z.array(z.string()),
  merchants: z.array(z.string()),
  main_channel: z.string().nullable(),
  fraud_rate: z.number(),
});
export const MetricsRings = z.object({
  model_id: z.string(),
  evaluation: Metrics.rings,
  live: z.object({
    note: z.string(),
    organization_id: z.string().optional().describe('With an API key: its organization'),
    flagged_groups: z.number().int(),
    groups: z.array(RingGroup).describe('The latest 50'),
  }),
});
export type MetricsRings = z.infer<typeof MetricsRings>;
