// The worker threads (Piscina, score-worker.ts) that do the heavy work of datasets off the event
// loop that answers HTTP: validating an upload (parsing every row) and scoring a dataset, and
// finding a weekly window's fraud rings (Louvain over its graph). A thread keeps the model loaded
// for the job that usually follows an upload (starting a thread and loading its modules and the
// model is a wait a first job would otherwise feel); an idle thread exits after a minute. The pool
// has one thread more than jobs may run, so an upload is never queued behind running jobs. The
// challengers' report compares its models there too (each comparison's bootstrap is seconds of CPU
// per 100,000 rows), so that it never holds the event loop.

import type { MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { trimSoon } from '../addon/memory.ts';
import type { ValidateOptions, ValidationResult } from '../datasets/csv.ts';
import type { BatchSummary } from '../contract/jobs.ts';
import type { Ring } from '../domain/rings.ts';
import { columnBuffers, shadowedColumns, type Comparison, type ComparisonOptions, type ShadowedRow } from '../model/challenger-comparison.ts';
import type { RingsTask, ScoreTask } from './score-worker.ts';

export class WorkerPool {
  private readonly modelDir: string;

  private readonly pool: Piscina;

  constructor(modelDir: string, maxRunning: number) {
    this.modelDir = modelDir;
    // The worker beside this module: score-worker.ts run from the sources, score-worker.js in the build (dist/).
    const worker = new URL(`./score-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;
    this.pool = new Piscina({ filename: worker, minThreads: 0, maxThreads: maxRunning + 1, idleTimeout: 60_000 });
    // An exited thread's memory stays with the process until the allocator is trimmed.
    this.pool.on('workerDestroy', trimSoon);
  }

  /** Validates an uploaded file and keeps its parsed rows for the job (datasets/columns.ts). */
  async validate(path: string, options: ValidateOptions): Promise<ValidationResult> {
    return (await this.pool.run({ validate: { path, options }, modelDir: this.modelDir })) as ValidationResult;
  }

  /** Scores a dataset; progress goes back through `port`. */
  async score(task: Omit<ScoreTask, 'modelDir' | 'port'>, port: MessagePort): Promise<BatchSummary> {
    return (await this.pool.run({ ...task, modelDir: this.modelDir, port }, { transferList: [port] })) as BatchSummary;
  }

  /** A window's rings (domain/rings.ts detectWindow), found in a worker thread. */
  async rings(task: RingsTask['rings']): Promise<Ring[]> {
    return (await this.pool.run({ rings: task })) as Ring[];
  }

  /** A challenger against the active model over `rows` (model/challenger-comparison.ts compareModels), in a worker thread. */
  async compare(rows: readonly ShadowedRow[], options?: Partial<ComparisonOptions>): Promise<Comparison> {
    const columns = shadowedColumns(rows);
    return (await this.pool.run({ compare: { columns, options } }, { transferList: columnBuffers(columns) })) as Comparison;
  }

  /** Threads running now. */
  get threads(): number {
    return this.pool.threads.length;
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
