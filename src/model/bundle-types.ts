// A model bundle's types, as the rest of the service sees a model: its folder's files as validated
// (`model.json`, `metrics.json`), the modes it decides in, and the bundle loaded for serving (each
// channel's booster in the native engine, its drift reference). bundle.ts loads a folder into these;
// they are apart from it so that a type needs no file system or native engine.

import { z } from 'zod';
import type { Engine } from '../addon/addon.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import type { DriftReference } from './drift-reference.ts';

/** A zod object shape with one entry per channel, in the channels' order. */
export function perChannel<T extends z.ZodType>(value: T): Record<Channel, T> {
  return Object.fromEntries(CHANNELS.map((c) => [c, value])) as Record<Channel, T>;
}

export const MODE_NAMES = ['balanced', 'high_precision', 'high_recall'] as const;
export type ModeName = (typeof MODE_NAMES)[number];

const Threshold = z.object({
  review: z.number().min(0).max(1),
  block: z.number().min(0).max(1),
  target: z.object({ metric: z.string(), value: z.number() }),
});

export const ModelFileSchema = z.object({
  id: z.string().min(1),
  version: z.string().min(1),
  data: z.object({ description: z.string(), rows: z.number(), fingerprint: z.string() }),
  code_fingerprint: z.string(),
  training: z.object({ seed: z.number(), iterations: z.number(), label_delay_ms: z.number().positive() }).passthrough(),
  channels: z
    .array(z.object({ name: z.enum(CHANNELS), file: z.string().regex(/^[\w.-]+$/), features: z.array(z.string()), categorical: z.array(z.number()) }))
    .length(4),
  stack: z.object({ bias: z.number(), weights: z.object(perChannel(z.number())) }),
  calibration: z.object({ method: z.literal('platt'), bias: z.number(), slope: z.number() }),
  cold_start: z.object({ min_prior: z.number().int().nonnegative(), floor: z.number().min(0).max(1) }),
  thresholds: z.object({ balanced: Threshold, high_precision: Threshold, high_recall: Threshold }),
  bands: z.object({ medium: z.number(), high: z.number(), critical: z.number() }),
});
export type ModelFile = z.infer<typeof ModelFileSchema>;

const Num = z.number().nullable();
const SplitMetrics = z
  .object({
    rows: z.number(),
    fraud_rate: Num,
    roc_auc: Num,
    average_precision: Num,
    brier: Num,
    log_loss: Num,
    expected_calibration_error: Num,
    recall_at_1pct_fpr: Num,
    cold_start_rows: z.number(),
  })
  .passthrough();
const ModeResult = z.object({
  review: z.number(),
  block: z.number(),
  target: z.object({ metric: z.string(), value: z.number() }),
  review_rate: Num,
  block_rate: Num,
  precision: Num,
  recall: Num,
  f1: Num,
  fraud_caught_per_1000: Num,
  review_warning: z.string().nullable(),
  measured: Num,
  meets_target: z.boolean(),
});

export const MetricsFileSchema = z.object({
  model_id: z.string(),
  splits: z.object({ train: SplitMetrics, validation: SplitMetrics, test: SplitMetrics }),
  channel_auc: z.object({ validation: z.record(z.string(), Num), test: z.record(z.string(), Num) }),
  modes: z.object({ split: z.literal('test'), balanced: ModeResult, high_precision: ModeResult, high_recall: ModeResult }),
  comparisons: z.record(z.string(), z.unknown()),
  /** The pipeline re-run on other simulator and training seeds (simulator data only). */
  seed_spread: z.record(z.string(), z.unknown()).optional(),
  /** The settings search on validation: every setting tried, and the one chosen. */
  selection: z
    .object({
      split: z.string(),
      settings_tried: z.number(),
      models_compared: z.number(),
      chosen: z.object({ params: z.record(z.string(), z.unknown()), iterations: z.number() }),
    })
    .passthrough()
    .optional(),
  rings: z.record(z.string(), z.unknown()),
  charts: z.object({
    split: z.string(),
    roc: z.array(z.object({ fpr: z.number(), tpr: z.number(), threshold: z.number() })),
    precision_recall: z.array(z.record(z.string(), z.number())),
    reliability: z.array(z.object({ bin: z.array(z.number()), predicted: Num, observed: Num, count: z.number() })),
    score_histograms: z.object({ edges: z.array(z.number()), fraud: z.array(z.number()), legitimate: z.array(z.number()) }),
  }),
  limitations: z.array(z.string()),
});
export type MetricsFile = z.infer<typeof MetricsFileSchema>;

export interface ModelProblem {
  reason: 'model_unavailable' | 'evaluation_unavailable';
  message: string;
  fix: string;
}

export interface LoadedChannel {
  name: Channel;
  features: readonly string[];
  engine: Engine;
  /** The booster's expected raw score (its SHAP base value). */
  expected: number;
}

export interface ModelBundle {
  file: ModelFile;
  channels: LoadedChannel[];
  /** What drift is measured against (reference.json); absent for a folder made without one. */
  reference?: DriftReference;
}

export interface LoadResult {
  model: ModelBundle | ModelProblem;
  metrics: MetricsFile | ModelProblem;
}

export function isProblem(x: unknown): x is ModelProblem {
  return typeof x === 'object' && x !== null && 'reason' in x && 'fix' in x;
}
