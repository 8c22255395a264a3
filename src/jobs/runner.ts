// Runs jobs in this server process: polls the durable queue (queue.ts), claims a job while fewer
// than MAX_RUNNING_JOBS run across all processes, and runs it by its kind: a scoring job in a
// Piscina worker thread (score-worker.ts; the event loop that answers HTTP never does the work), a
// history import here (history-import.ts: the database does its work, in chunks), a weekly window's
// ring analysis here (src/live/ring-windows.ts: a week of one organization's transactions). Each writes its
// progress as the work reports it plus a heartbeat, and records the result or the failure. At start
// it takes up jobs whose process died (stale heartbeat), so a crash loses no job.

import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { getDataset } from '../storage/datasets.ts';
import type { DatasetFiles } from '../storage/datasets.ts';
import type { Db } from '../storage/db.ts';
import type { BatchSummary } from './batch-score.ts';
import type { ValidateOptions, ValidationResult } from '../datasets/csv.ts';
import { claimNext, failJob, finishJob, recoverStale, releaseWorker, reportProgress, type JobRecord } from '../storage/job-queue.ts';
import { DEFAULT_LABEL_DELAY_MS } from '../domain/history/history.ts';
import { runRingsJob, type RingsJobParams } from '../live/ring-windows.ts';
import { datasetSource, exampleSource, ImportParams, ImportRefused, ImportStopped, runHistoryImport, type ExampleRecords, type ImportSource } from './history-import.ts';

export interface RunnerOptions {
  db: Db;
  datasets: DatasetFiles;
  dataDir: string;
  modelDir: string;
  maxRunning: number;
  log: (msg: string) => void;
  pollMs?: number;
  heartbeatMs?: number;
  /** A running job whose heartbeat is older than this is taken to have lost its process. */
  staleMs?: number;
  /** The model's label delay: an imported label is known this long after its transaction. */
  labelDelay?: number;
  /** The built-in example's rows for an example import (the sandbox's: nothing simulated again). */
  example: () => ExampleRecords;
  /** Before an import stores anything: what this process has scored but not written yet is
   *  written (the decision log), so the import skips those ids rather than taking them. */
  beforeHistoryImport?: () => Promise<void>;
  /** After an import stored rows into an organization's history: the service drops its copy in
   *  memory, which must be built in time order, so the next request loads it again. */
  onHistoryImported?: (organizationId: string) => void;
}

/**
 * A running job's progress, written one statement at a time and in order. A heartbeat and a report
 * sent together would otherwise go out on two pooled connections and could land in either order,
 * so that a reader saw progress go back. Each write sends the latest stage and fraction.
 */
export class ProgressWriter {
  fraction = 0;
  private last: Promise<boolean> = Promise.resolve(true);

  constructor(
    private readonly db: Db,
    private readonly jobId: string,
    private readonly worker: string,
    public stage: string,
  ) {}

  /** Writes the progress after every earlier write; false when the job is no longer this worker's. */
  write(): Promise<boolean> {
    this.last = this.last.then(() => reportProgress(this.db, this.jobId, this.worker, this.stage, this.fraction).catch(() => false));
    return this.last;
  }
}

export class JobRunner {
  readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly resultsDir: string;
  private readonly pool: Piscina;
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private stopped = false;

  constructor(private readonly o: RunnerOptions) {
    this.resultsDir = join(o.dataDir, 'results');
    mkdirSync(this.resultsDir, { recursive: true });
    // The worker beside this module: score-worker.ts under tsx, score-worker.js in the build (dist/).
    const worker = new URL(`./score-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;
    this.pool = new Piscina({ filename: worker, minThreads: 0, maxThreads: o.maxRunning + 1, idleTimeout: 60_000 });
  }

  /**
   * Validates an uploaded file in a worker thread, so that parsing a large file never holds up the
   * event loop that answers HTTP (≈ 0.45 s of parsing per 100,000 rows). The thread then keeps the
   * model loaded for the job that usually follows (starting a thread and loading its modules and
   * the model takes ≈ 0.15–0.25 s, which a first job would otherwise wait for); an idle thread
   * exits after a minute. The pool has one thread more than jobs may run, so an upload is never
   * queued behind running jobs.
   */
  async validate(path: string, options: ValidateOptions): Promise<ValidationResult> {
    return (await this.pool.run({ validate: { path, options }, modelDir: this.o.modelDir })) as ValidationResult;
  }

  /** Worker threads running now. */
  get threads(): number {
    return this.pool.threads.length;
  }

  resultPath(jobId: string): string {
    if (!/^job_[\w-]+$/.test(jobId)) throw new Error('not a job id');
    return join(this.resultsDir, `${jobId}.ndjson`);
  }

  async start(): Promise<void> {
    const recovered = await recoverStale(this.o.db, this.o.staleMs ?? 30_000);
    if (recovered.requeued.length) this.o.log(`queued again ${recovered.requeued.length} job(s) whose server stopped`);
    if (recovered.failed.length) this.o.log(`failed ${recovered.failed.length} job(s) that stopped too often`);
    this.timer = setInterval(() => void this.poll(), this.o.pollMs ?? 250);
    this.timer.unref();
    void this.poll();
  }

  /** Claims and starts what it can now (also called right after a job is queued). */
  async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      await recoverStale(this.o.db, this.o.staleMs ?? 30_000);
      while (!this.stopped && this.running.size < this.o.maxRunning) {
        const job = await claimNext(this.o.db, this.worker, this.o.maxRunning);
        if (!job) break;
        const p = this.run(job).finally(() => this.running.delete(p));
        this.running.add(p);
      }
    } catch (e) {
      this.o.log(`job queue: ${(e as Error).message}`);
    } finally {
      this.polling = false;
    }
  }

  private async run(job: JobRecord): Promise<void> {
    if (job.kind === 'history_import') return this.runImport(job);
    if (job.kind === 'rings') return this.runRings(job);
    const { db } = this.o;
    const dataset = job.dataset_id === null ? undefined : await getDataset(db, job.dataset_id);
    if (!dataset || dataset.removed) {
      await failJob(db, job.id, this.worker, `the dataset was ${dataset?.removed ?? 'not found'} before the job ran`);
      return;
    }
    const resultPath = this.resultPath(job.id);
    for (const f of [resultPath, `${resultPath}.csv`, `${resultPath}.idx`, `${resultPath}.features`]) await rm(f, { force: true }); // an earlier attempt's partial files
    const progress = new ProgressWriter(db, job.id, this.worker, 'parsing');
    let lastWrite = 0;
    const channel = new MessageChannel();
    channel.port1.on('message', (m: { stage: string; fraction: number }) => {
      progress.stage = m.stage;
      // Overall progress: parsing 0–10 %, features 10–40 %, scoring 40–95 %, writing 95–100 %.
      const span = { parsing: [0, 0.1], features: [0.1, 0.4], scoring: [0.4, 0.95], writing: [0.95, 1] }[m.stage] ?? [0, 1];
      progress.fraction = Math.max(progress.fraction, span[0]! + (span[1]! - span[0]!) * m.fraction);
      const now = Date.now();
      if (now - lastWrite > 200) {
        lastWrite = now;
        void progress.write();
      }
    });
    const heartbeat = setInterval(() => void progress.write(), this.o.heartbeatMs ?? 2000);
    try {
      const summary = (await this.pool.run(
        { modelDir: this.o.modelDir, path: this.o.datasets.path(dataset.stored_name), mapping: dataset.mapping, mode: job.mode ?? 'balanced', resultPath, expectedRows: dataset.rows, port: channel.port2 },
        { transferList: [channel.port2] },
      )) as BatchSummary;
      await finishJob(db, job.id, this.worker, summary);
    } catch (e) {
      this.o.log(`job ${job.id} failed: ${(e as Error).message}`);
      await failJob(db, job.id, this.worker, `scoring failed: ${(e as Error).message.slice(0, 300)}`);
    } finally {
      clearInterval(heartbeat);
      channel.port1.close();
    }
  }

  /** A history import: its source from the job's params, checked, stored chunk by chunk with a
   *  progress report per chunk and a heartbeat between them. */
  private async runImport(job: JobRecord): Promise<void> {
    const { db } = this.o;
    const progress = new ProgressWriter(db, job.id, this.worker, 'checking');
    const heartbeat = setInterval(() => void progress.write(), this.o.heartbeatMs ?? 2000);
    try {
      const params = ImportParams.safeParse(job.params);
      if (!params.success || !job.organization_id) throw new ImportRefused('the job does not say what to import or where; queue the import again');
      // The moment the import began, the same on every attempt: the example ends there, and no
      // uploaded row may be later.
      const at = (job.started_at ?? new Date()).getTime();
      const stamp = { jobId: job.id, labelDelay: this.o.labelDelay ?? DEFAULT_LABEL_DELAY_MS };
      let source: ImportSource;
      if (params.data.source === 'example') source = exampleSource(this.o.example(), at, stamp);
      else {
        const dataset = await getDataset(db, params.data.dataset_id);
        if (!dataset || dataset.removed) throw new ImportRefused(`the dataset was ${dataset?.removed ?? 'not found'} before the import ran; upload the file again and import that`);
        source = datasetSource(this.o.datasets.path(dataset.stored_name), dataset.mapping, dataset.validation.columns.transaction_id !== null, at, stamp);
      }
      const organizationId = job.organization_id;
      await this.o.beforeHistoryImport?.();
      const summary = await runHistoryImport({
        db,
        organizationId,
        jobId: job.id,
        source,
        progress: (s, f) => {
          progress.stage = s;
          progress.fraction = f;
          return progress.write();
        },
        stopped: () => this.stopped,
        onStored: () => this.o.onHistoryImported?.(organizationId),
      });
      await finishJob(db, job.id, this.worker, summary);
    } catch (e) {
      if (e instanceof ImportStopped) return; // handed back to the queue: whoever claims it next finishes it
      if (!(e instanceof ImportRefused)) this.o.log(`job ${job.id} failed: ${(e as Error).message}`);
      await failJob(db, job.id, this.worker, e instanceof ImportRefused ? e.message : 'the import failed on our side; rows stored so far are kept and an import queued again skips them');
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** A weekly window's rings, found and stored (queued by src/live/ring-windows.ts). */
  private async runRings(job: JobRecord): Promise<void> {
    const { db } = this.o;
    const progress = new ProgressWriter(db, job.id, this.worker, 'analysing');
    const heartbeat = setInterval(() => void progress.write(), this.o.heartbeatMs ?? 2000);
    try {
      const params = job.params as RingsJobParams | null;
      if (!params?.organization_id || !Number.isFinite(params.window_start)) throw new Error('the job does not name an organization and a window');
      await finishJob(db, job.id, this.worker, await runRingsJob(db, params, this.o.labelDelay ?? DEFAULT_LABEL_DELAY_MS));
    } catch (e) {
      this.o.log(`job ${job.id} failed: ${(e as Error).message}`);
      await failJob(db, job.id, this.worker, `ring analysis failed: ${(e as Error).message.slice(0, 300)}`);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Stops claiming, hands running jobs back to the queue (another process, or the next start,
   *  takes them up), and stops the workers. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const released = await releaseWorker(this.o.db, this.worker).catch(() => []);
    if (released.length) this.o.log(`handed ${released.length} running job(s) back to the queue`);
    await this.pool.destroy();
    await Promise.allSettled([...this.running]);
  }
}
