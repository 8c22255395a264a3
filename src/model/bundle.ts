// A model folder (models/<id>/, see models/README.md) loaded for serving: `model.json` validated
// with zod, each channel's LightGBM booster loaded into the native engine (one shared instance per
// process), its drift reference (`reference.json`, drift.ts) when it has one, and `metrics.json`
// validated separately, because a model can serve without its
// evaluation but the evaluation endpoints cannot answer without it.
//
// Nothing here throws at a caller: a missing or corrupt file becomes a `ModelProblem` with a stable
// reason (`model_unavailable`, `evaluation_unavailable`) and a message that names the file but not
// the server's path, so the service starts, says what is wrong (503), and does not crash.

import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { EngineError, loadModel, type Engine } from '../addon/addon.ts';
import { CHANNEL_FEATURES, type Channel } from '../domain/features/extract.ts';
import { loadReference, type DriftReference } from './drift.ts';

export const CHANNEL_NAMES = ['tabular', 'behavioral', 'velocity', 'graph'] as const satisfies readonly Channel[];
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
    .array(z.object({ name: z.enum(CHANNEL_NAMES), file: z.string().regex(/^[\w.-]+$/), features: z.array(z.string()), categorical: z.array(z.number()) }))
    .length(4),
  stack: z.object({ bias: z.number(), weights: z.object({ tabular: z.number(), behavioral: z.number(), velocity: z.number(), graph: z.number() }) }),
  calibration: z.object({ method: z.literal('platt'), bias: z.number(), slope: z.number() }),
  cold_start: z.object({ min_prior: z.number().int().nonnegative(), floor: z.number().min(0).max(1) }),
  thresholds: z.object({ balanced: Threshold, high_precision: Threshold, high_recall: Threshold }),
  bands: z.object({ medium: z.number(), high: z.number(), critical: z.number() }),
});
export type ModelFile = z.infer<typeof ModelFileSchema>;

const Num = z.number().nullable();
const SplitMetrics = z.object({
  rows: z.number(),
  fraud_rate: Num,
  roc_auc: Num,
  average_precision: Num,
  brier: Num,
  log_loss: Num,
  expected_calibration_error: Num,
  recall_at_1pct_fpr: Num,
  cold_start_rows: z.number(),
}).passthrough();
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
    .object({ split: z.string(), settings_tried: z.number(), models_compared: z.number(), chosen: z.object({ params: z.record(z.string(), z.unknown()), iterations: z.number() }) })
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

const where = (dir: string, file: string) => `${basename(dir)}/${file}`;

function readJson(dir: string, file: string): { ok: true; value: unknown } | { ok: false; message: string } {
  let text: string;
  try {
    text = readFileSync(join(dir, file), 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, message: code === 'ENOENT' ? `${where(dir, file)} is missing` : `${where(dir, file)} cannot be read (${code ?? 'error'})` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: `${where(dir, file)} is not valid JSON` };
  }
}

function issues(e: z.ZodError): string {
  return e.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

export function loadModelFolder(dir: string): ModelBundle | ModelProblem {
  const fix = 'Re-create the model folder with `npm run train`, or point MODEL_DIR at a complete model folder, then restart.';
  const json = readJson(dir, 'model.json');
  if (!json.ok) return { reason: 'model_unavailable', message: `No model is loaded: ${json.message}.`, fix };
  const parsed = ModelFileSchema.safeParse(json.value);
  if (!parsed.success) return { reason: 'model_unavailable', message: `No model is loaded: ${where(dir, 'model.json')} is not a valid model description (${issues(parsed.error)}).`, fix };
  const file = parsed.data;
  const channels: LoadedChannel[] = [];
  for (const name of CHANNEL_NAMES) {
    const c = file.channels.find((x) => x.name === name);
    if (!c) return { reason: 'model_unavailable', message: `No model is loaded: model.json has no ${name} channel.`, fix };
    const expectedFeatures = CHANNEL_FEATURES[name] as readonly string[];
    if (c.features.length !== expectedFeatures.length || c.features.some((f, i) => f !== expectedFeatures[i])) {
      return { reason: 'model_unavailable', message: `No model is loaded: the ${name} channel was trained on other features than this server computes (retrain with this version).`, fix };
    }
    let text: string;
    try {
      text = readFileSync(join(dir, c.file), 'utf8');
    } catch {
      return { reason: 'model_unavailable', message: `No model is loaded: ${where(dir, c.file)} is missing or unreadable.`, fix };
    }
    let engine: Engine;
    try {
      engine = loadModel(text);
    } catch (e) {
      const detail = e instanceof EngineError ? `${e.code}${e.line ? ` at line ${e.line}` : ''}` : 'unreadable';
      return { reason: 'model_unavailable', message: `No model is loaded: ${where(dir, c.file)} is not a usable LightGBM model (${detail}).`, fix };
    }
    if (engine.numFeatures !== c.features.length) {
      return { reason: 'model_unavailable', message: `No model is loaded: ${where(dir, c.file)} has ${engine.numFeatures} features, model.json lists ${c.features.length}.`, fix };
    }
    // The expected raw score: SHAP's base value, the last entry of any row's contributions.
    const phi = engine.shap(new Float64Array(c.features.length).fill(Number.NaN));
    channels.push({ name, features: c.features, engine, expected: phi[phi.length - 1]! });
  }
  const bundle: ModelBundle = { file, channels };
  bundle.reference = loadReference(dir, bundle);
  return bundle;
}

export function loadMetrics(dir: string, modelId: string | undefined): MetricsFile | ModelProblem {
  const fix = 'Run `npm run train` to produce the evaluation (metrics.json) with the model, then restart.';
  const json = readJson(dir, 'metrics.json');
  if (!json.ok) return { reason: 'evaluation_unavailable', message: `The evaluation has not been run: ${json.message}.`, fix };
  const parsed = MetricsFileSchema.safeParse(json.value);
  if (!parsed.success) return { reason: 'evaluation_unavailable', message: `The evaluation cannot be read: ${where(dir, 'metrics.json')} is not valid (${issues(parsed.error)}).`, fix };
  if (modelId !== undefined && parsed.data.model_id !== modelId) {
    return { reason: 'evaluation_unavailable', message: `The evaluation in ${where(dir, 'metrics.json')} belongs to model ${parsed.data.model_id}, not to the loaded ${modelId}.`, fix };
  }
  return parsed.data;
}

export function loadModelAndMetrics(dir: string): LoadResult {
  const model = loadModelFolder(dir);
  const metrics = loadMetrics(dir, isProblem(model) ? undefined : model.file.id);
  return { model, metrics };
}
