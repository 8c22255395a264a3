// The Piscina worker that scores one dataset (batch-score.ts). The model folder is loaded once per
// worker thread, and the native model itself once per process (the addon's registry shares one
// instance across threads). Progress goes back to the job runner through a MessagePort. The same
// threads validate uploads (csv.ts) and keep their parsed rows for the job (columns.ts), off the
// event loop that answers HTTP, and load the model after each, so that the job queued soon after
// finds a thread ready. They also find a weekly window's fraud rings for the rings job, and compare
// a challenger with the active model over a backtest's rows (its paired bootstrap) for the
// challengers' report.

import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isMainThread, type MessagePort } from 'node:worker_threads';
import { scoreDataset } from './batch-score.ts';
import type { BatchSummary } from '../contract/jobs.ts';
import { loadModelFolder } from '../model/bundle.ts';
import { isProblem, type ModelBundle, type ModeName } from '../model/bundle-types.ts';
import type { ColumnMapping, ValidateOptions, ValidationResult } from '../datasets/csv.ts';
import { validateAndKeep } from '../datasets/columns.ts';
import { detectWindow, type RingOptions, type Ring } from '../domain/rings.ts';
import { decodeWindow, type WindowRows } from '../storage/rings-store.ts';
import { compareModels, shadowedRows, type Comparison, type ComparisonOptions, type ShadowedColumns } from '../model/challenger-comparison.ts';

/** How much lower than the process's the scheduling priority of these threads is (a nice
 *  increment): jobs are background work, and on a machine with few cores a thread busy with one
 *  would otherwise take the CPU from the event loop answering requests. */
export const JOB_THREAD_NICENESS = 10;

// Linux schedules threads one by one: this thread's own id, from /proc/thread-self, lowers its
// priority alone (never the main thread's, should this module be loaded there). Elsewhere, or where
// it is not allowed, the thread runs at the process's priority.
if (!isMainThread) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + JOB_THREAD_NICENESS));
  } catch {
    // Not Linux, or not permitted: nothing to lower.
  }
}

export interface ScoreTask {
  modelDir: string;
  path: string;
  mapping: ColumnMapping;
  mode: ModeName;
  resultPath: string;
  expectedRows: number;
  port: MessagePort;
}

/** Validates an uploaded file (JobRunner.validate), then loads the model: the thread is then
 *  ready for the job that usually follows an upload. */
export interface ValidateTask {
  validate: { path: string; options: ValidateOptions };
  modelDir: string;
}

/** Finds a window's rings (rings-job.ts); needs no model. */
export interface RingsTask {
  /** The window's transactions as the database gave them (storage/rings-store.ts), decoded here. */
  rings: { rows: WindowRows; start: number; options: Partial<RingOptions>; seed: number };
}

/** Compares a challenger with the active model over rows both scored (model/challenger-comparison.ts):
 *  a backtest's bootstrap over thousands of rows takes a second of CPU; needs no model. */
export interface CompareTask {
  compare: { columns: ShadowedColumns; options?: Partial<ComparisonOptions> | undefined };
}

const bundles = new Map<string, ModelBundle>();

function bundleFor(modelDir: string): ModelBundle {
  let bundle = bundles.get(modelDir);
  if (!bundle) {
    const loaded = loadModelFolder(modelDir);
    if (isProblem(loaded)) throw new Error(loaded.message);
    bundles.set(modelDir, (bundle = loaded));
  }
  return bundle;
}

export default async function scoreTask(
  task: ScoreTask | ValidateTask | RingsTask | CompareTask,
): Promise<BatchSummary | ValidationResult | Ring[] | Comparison> {
  if ('compare' in task) return compareModels(shadowedRows(task.compare.columns), task.compare.options);
  if ('rings' in task) return detectWindow(decodeWindow(task.rings.rows), task.rings.start, task.rings.options, task.rings.seed);
  if ('validate' in task) {
    const result = await validateAndKeep(task.validate.path, task.validate.options);
    bundleFor(task.modelDir);
    return result;
  }
  const bundle = bundleFor(task.modelDir);
  try {
    return await scoreDataset(bundle, { ...task, progress: (stage, fraction) => task.port.postMessage({ stage, fraction }) });
  } finally {
    task.port.close();
  }
}
