// Loading a model folder (models/<id>/, see models/README.md) for serving (its types:
// bundle-types.ts): `model.json` validated with zod, each channel's LightGBM booster loaded into the
// native engine (one shared instance per process), its drift reference (`reference.json`,
// drift.ts) when it has one, and `metrics.json` validated separately, because a model can
// serve without its evaluation but the evaluation endpoints cannot answer without it.
//
// Nothing here throws at a caller: a missing or corrupt file becomes a `ModelProblem` with a stable
// reason (`model_unavailable`, `evaluation_unavailable`) and a message that names the file but not
// the server's path, so the service starts, says what is wrong (503), and does not crash.

import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { z } from 'zod';
import { EngineError, loadModel, type Engine } from '../addon/addon.ts';
import { CHANNELS, type Channel } from '../domain/channels.ts';
import { CHANNEL_FEATURES } from '../domain/features/extract.ts';
import { loadReference, testFigures } from './drift.ts';
import {
  isProblem,
  MetricsFileSchema,
  ModelFileSchema,
  type LoadedChannel,
  type LoadResult,
  type MetricsFile,
  type ModelBundle,
  type ModelProblem,
} from './bundle-types.ts';

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
  return e.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

/** The model of a folder, with its drift reference and the test figures it is held to. */
export function loadModelFolder(dir: string): ModelBundle | ModelProblem {
  return loadModelAndMetrics(dir).model;
}

/** One channel's booster from its LightGBM model text, checked against the features it is said to
 *  take; or what is wrong with it (to follow the booster's name in a message). */
export function loadChannel(name: Channel, features: readonly string[], text: string): LoadedChannel | string {
  let engine: Engine;
  try {
    engine = loadModel(text);
  } catch (e) {
    const detail = e instanceof EngineError ? `${e.code}${e.line ? ` at line ${e.line}` : ''}` : 'unreadable';
    return `is not a usable LightGBM model (${detail})`;
  }
  if (engine.numFeatures !== features.length) return `has ${engine.numFeatures} features, where the model lists ${features.length}`;
  // The expected raw score: SHAP's base value, the last entry of any row's contributions.
  const phi = engine.shap(new Float64Array(features.length).fill(Number.NaN));
  return { name, features, engine, expected: phi[phi.length - 1]! };
}

/** The LightGBM texts of the boosters a model folder's bundle was loaded from, in the bundle's
 *  channel order (for offline tools that build on them; a loaded bundle keeps only its engines). */
export function boosterTexts(dir: string, bundle: ModelBundle): string[] {
  return bundle.channels.map((c) => readFileSync(join(dir, bundle.file.channels.find((f) => f.name === c.name)!.file), 'utf8'));
}

/** model.json and the boosters it names, without the reference (which needs the evaluation). */
function loadBoosters(dir: string): ModelBundle | ModelProblem {
  const fix = 'Re-create the model folder with `npm run train`, or point MODEL_DIR at a complete model folder, then restart.';
  const json = readJson(dir, 'model.json');
  if (!json.ok) return { reason: 'model_unavailable', message: `No model is loaded: ${json.message}.`, fix };
  const parsed = ModelFileSchema.safeParse(json.value);
  if (!parsed.success)
    return {
      reason: 'model_unavailable',
      message: `No model is loaded: ${where(dir, 'model.json')} is not a valid model description (${issues(parsed.error)}).`,
      fix,
    };
  const file = parsed.data;
  const channels: LoadedChannel[] = [];
  for (const name of CHANNELS) {
    const c = file.channels.find((x) => x.name === name);
    if (!c) return { reason: 'model_unavailable', message: `No model is loaded: model.json has no ${name} channel.`, fix };
    const expectedFeatures = CHANNEL_FEATURES[name] as readonly string[];
    if (c.features.length !== expectedFeatures.length || c.features.some((f, i) => f !== expectedFeatures[i])) {
      return {
        reason: 'model_unavailable',
        message: `No model is loaded: the ${name} channel was trained on other features than this server computes (retrain with this version).`,
        fix,
      };
    }
    let text: string;
    try {
      text = readFileSync(join(dir, c.file), 'utf8');
    } catch {
      return { reason: 'model_unavailable', message: `No model is loaded: ${where(dir, c.file)} is missing or unreadable.`, fix };
    }
    const channel = loadChannel(name, c.features, text);
    if (typeof channel === 'string') return { reason: 'model_unavailable', message: `No model is loaded: ${where(dir, c.file)} ${channel}.`, fix };
    channels.push(channel);
  }
  return { file, channels };
}

export function loadMetrics(dir: string, modelId: string | undefined): MetricsFile | ModelProblem {
  const fix = 'Run `npm run train` to produce the evaluation (metrics.json) with the model, then restart.';
  const json = readJson(dir, 'metrics.json');
  if (!json.ok) return { reason: 'evaluation_unavailable', message: `The evaluation has not been run: ${json.message}.`, fix };
  const parsed = MetricsFileSchema.safeParse(json.value);
  if (!parsed.success)
    return {
      reason: 'evaluation_unavailable',
      message: `The evaluation cannot be read: ${where(dir, 'metrics.json')} is not valid (${issues(parsed.error)}).`,
      fix,
    };
  if (modelId !== undefined && parsed.data.model_id !== modelId) {
    return {
      reason: 'evaluation_unavailable',
      message: `The evaluation in ${where(dir, 'metrics.json')} belongs to model ${parsed.data.model_id}, not to the loaded ${modelId}.`,
      fix,
    };
  }
  return parsed.data;
}

/** The model and its evaluation, each read once: the drift reference takes its test figures from
 *  the evaluation when there is one. */
export function loadModelAndMetrics(dir: string): LoadResult {
  const model = loadBoosters(dir);
  const metrics = loadMetrics(dir, isProblem(model) ? undefined : model.file.id);
  if (!isProblem(model)) model.reference = loadReference(dir, model, isProblem(metrics) ? undefined : testFigures(metrics));
  return { model, metrics };
}
