// LightGBM itself, for training, the parity tests and bench:engine: its trainer
// (`trainLightgbm`) and its own predictor (`lightgbmReference`, the reference our engine is held
// to). They live in the LightGBM-enabled build of the addon (native/lightgbm/, the crate's
// `lightgbm` feature), which the service never loads and `npm ci` does not make. The first call
// builds it (scripts/build-native.mjs --lightgbm: a few minutes, and CMake ≥ 3.28 and libclang,
// which the build checks first), so a command checks its options before; later runs reuse it, and
// rebuild only when the crate's sources are newer than it. Its interface is the service build's
// (native/index.d.ts): in that build the same names exist and fail with `lightgbm_unavailable`.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Native from '../../native/index.js';
import { EngineError, guarded, translate } from './addon.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const crate = join(root, 'native');
const buildDir = join(crate, 'lightgbm');

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return readdirSync(path).reduce((m, name) => Math.max(m, newest(join(path, name))), s.mtimeMs);
}

function binary(): string | undefined {
  if (!existsSync(buildDir)) return undefined;
  const name = readdirSync(buildDir).find((f) => f.endsWith('.node'));
  return name && join(buildDir, name);
}

/** True when the LightGBM-enabled build exists and no source of the crate is newer. */
export function lightgbmBuildCurrent(): boolean {
  const built = binary();
  if (!built) return false;
  const sources = Math.max(newest(join(crate, 'src')), ...['Cargo.toml', 'Cargo.lock', 'build.rs'].map((f) => statSync(join(crate, f)).mtimeMs));
  return statSync(built).mtimeMs >= sources;
}

function ensureBuilt(): void {
  if (lightgbmBuildCurrent()) return;
  process.stderr.write(
    'Building the addon with LightGBM (native/lightgbm/; the first time takes a few minutes: it compiles LightGBM, which needs CMake >= 3.28 and libclang)…\n',
  );
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-native.mjs'), '--lightgbm'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new EngineError('lightgbm_unavailable', 'The LightGBM-enabled addon could not be built (above: why, and the fix).');
}

let loaded: typeof Native | undefined;

/** The LightGBM-enabled addon, built first if it is missing or older than its sources. */
function native(): typeof Native {
  if (!loaded) {
    ensureBuilt();
    loaded = createRequire(import.meta.url)(binary()!) as typeof Native;
  }
  return loaded;
}

/** LightGBM's own predictor (its C API): the reference of parity tests and benchmarks. */
export class LightGbm {
  private readonly inner: Native.LightGbm;

  constructor(inner: Native.LightGbm) {
    this.inner = inner;
  }

  get numFeatures(): number {
    return this.inner.numFeatures;
  }
  predict(rows: Float64Array, raw: boolean): Float64Array {
    return guarded(() => this.inner.predict(rows, raw));
  }
  predictContrib(rows: Float64Array): Float64Array {
    return guarded(() => this.inner.predictContrib(rows));
  }
  predictRawSingle(row: Float64Array): number {
    try {
      return this.inner.predictRawSingle(row);
    } catch (e) {
      translate(e);
    }
  }
  predictContribSingle(row: Float64Array): Float64Array {
    return guarded(() => this.inner.predictContribSingle(row));
  }
}

export interface TrainOptions {
  /** Row-major feature matrix. */
  rows: Float64Array;
  numFeatures: number;
  labels: Float64Array;
  /** LightGBM parameters, e.g. `{ objective: 'binary', num_leaves: 31 }`. */
  params: Record<string, string | number | boolean>;
  /** Columns to treat as categorical (integer-coded). */
  categorical?: number[];
  iterations: number;
  /** Each row's starting raw score (another model's margins): the trees learn what it misses, and
   *  the model text holds only them. */
  initScores?: Float64Array;
}

function paramString(params: Record<string, string | number | boolean>): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

/** Trains a LightGBM model natively and returns its text. Deterministic for a given `seed` param. */
export function trainLightgbm(o: TrainOptions): string {
  // As LightGBM's Python package does, the dataset sees the training parameters too: binning,
  // missing-value handling and linear trees are fixed when the dataset is built.
  const all = { verbose: -1, num_threads: 1, deterministic: true, ...o.params };
  const datasetParams = { ...all, ...(o.categorical?.length ? { categorical_feature: o.categorical.join(',') } : {}) };
  const params = paramString(all);
  return guarded(() => native().lightgbmTrain(o.rows, o.numFeatures, o.labels, params, paramString(datasetParams), o.iterations, o.initScores));
}

/** The largest absolute difference between our answers and LightGBM's, element by element;
 *  NaN against NaN agrees, NaN against a number or arrays of different lengths are infinitely
 *  far apart. */
export function largestDifference(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  if (ours.length !== theirs.length) return Infinity;
  let d = 0;
  for (let i = 0; i < ours.length; i++) {
    const x = ours[i]!;
    const y = theirs[i]!;
    if (x === y || (Number.isNaN(x) && Number.isNaN(y))) continue;
    const e = Math.abs(x - y);
    d = Number.isNaN(e) ? Infinity : Math.max(d, e);
  }
  return d;
}

/** LightGBM's own predictor over model text: the reference in parity tests and benchmarks. */
export function lightgbmReference(text: string): LightGbm {
  return new LightGbm(guarded(() => native().LightGbm.fromText(text)));
}
