// Runs jobs in this server process: polls the durable queue (storage/job-queue.ts), claims a job
// while fewer than MAX_RUNNING_JOBS run across all processes, and hands it to the handler
// registered for its kind (the composition root registers them: scoring a dataset, a history
// import, a weekly window's rings). The runner knows no kind: it writes each job's progress as the
// handler reports it plus a heartbeat, and records the handler's result or its failure. At start
// it takes up jobs whose process died (stale heartbeat), so a crash loses no job.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../storage/db.ts';
import {
  claimNext,
  failJob,
  finishJob,
  recoverStale,
  releaseWorker,
  reportProgress,
  requeueJob,
  type JobAnnouncer,
  type JobKind,
  type JobRecord,
} from '../storage/job-queue.ts';
import type { ValidateOptions, ValidationResult } from '../datasets/csv.ts';
import { resultPath } from './results.ts';
import type { WorkerPool } from './worker-pool.ts';
import { unbounded } from '../storage/deadline.ts';
import { databaseUnavailable as isOutage } from '../storage/errors.ts';

export interface RunnerOptions {
  db: Db;
  /** Where result files are written (DATA_DIR). */
  dataDir: string;
  /** The worker threads that validate uploads and score datasets. */
  pool: WorkerPool;
  maxRunning: number;
  log: (msg: string) => void;
  pollMs?: number;
  heartbeatMs?: number;
  /** A running job whose heartbeat is older than this is taken to have lost its process. */
  staleMs?: number;
  /** The webhook events a finished or failed job is, written in the same transaction as its state. */
  announce?: JobAnnouncer;
}

/** A job that cannot run as it was queued: its `error` is this message, as it is, and nothing is
 *  logged (the caller's to fix, not the server's). */
export class JobRefused extends Error {}

/** A job handed back to the queue unfinished (the server is stopping): whoever claims it next
 *  finishes it. */
export class JobStopped extends Error {}

/** What a handler gets besides its job. */
export interface JobContext {
  progress: ProgressWriter;
  /** True once the runner is closing: a long job stops at its next chunk (JobStopped). */
  stopped(): boolean;
}

export interface JobHandler {
  /** The stage a job of this kind starts in. */
  stage: string;
  /** Does the work; what it returns is stored as the job's result. */
  run(job: JobRecord, context: JobContext): Promise<unknown>;
  /** The job's `error` when the work failed on the server's side (JobRefused's message is used as
   *  it is). */
  failure(message: string): string;
}

/**
 * A running job's progress, written one statement at a time and in order. A heartbeat and a report
 * sent together would otherwise go out on two pooled connections and could land in either order,
 * so that a reader would see progress go back. Each write sends the latest stage and fraction.
 */
export class ProgressWriter {
  private readonly db: Db;
  private readonly jobId: string;
  private readonly worker: string;
  stage: string;

  fraction = 0;
  private last: Promise<boolean> = Promise.resolve(true);

  constructor(db: Db, jobId: string, worker: string, stage: string) {
    this.db = db;
    this.jobId = jobId;
    this.worker = worker;
    this.stage = stage;
  }

  /** Writes the progress after every earlier write; false when the job is no longer this worker's.
   *  A write that failed says nothing of whose the job is: the work goes on, and meets the outage
   *  in its own statements if it needs the database. */
  write(): Promise<boolean> {
    this.last = this.last.then(() => reportProgress(this.db, this.jobId, this.worker, this.stage, this.fraction).catch(() => true));
    return this.last;
  }
}

export class JobRunner {
  private readonly o: RunnerOptions;

  readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly running = new Set<Promise<void>>();
  /** Jobs this process runs now, by kind (what /api/health reports). */
  private readonly kinds = new Map<JobKind, number>();
  private timer: NodeJS.Timeout | undefined;
  /** The poll in flight: close() waits for it, so a job it claims is handed back with the rest. */
  private polling: Promise<void> | undefined;
  private stopped = false;
  /** The last poll met an outage of the database (logged once, and once when it ends). */
  private queueDown = false;

  constructor(o: RunnerOptions) {
    this.o = o;
  }

  /** Runs jobs of `kind` with `handler` (before `start`). */
  register(kind: JobKind, handler: JobHandler): this {
    this.handlers.set(kind, handler);
    return this;
  }

  /** Validates an uploaded file in a worker thread (WorkerPool.validate). */
  validate(path: string, options: ValidateOptions): Promise<ValidationResult> {
    return this.o.pool.validate(path, options);
  }

  /** Jobs this process runs now, by kind (kinds with none left out). */
  get runningByKind(): Partial<Record<JobKind, number>> {
    return Object.fromEntries(this.kinds);
  }

  /** Worker threads running now. */
  get threads(): number {
    return this.o.pool.threads;
  }

  /** Where a job's result lines are written. */
  resultPath(jobId: string): string {
    return resultPath(this.o.dataDir, jobId);
  }

  async start(): Promise<void> {
    const recovered = await recoverStale(this.o.db, this.o.staleMs ?? 30_000, this.worker, this.o.announce);
    if (recovered.requeued.length) this.o.log(`queued again ${recovered.requeued.length} job(s) whose server stopped`);
    if (recovered.failed.length) this.o.log(`failed ${recovered.failed.length} job(s) that stopped too often`);
    this.timer = setInterval(() => void this.poll(), this.o.pollMs ?? 250);
    this.timer.unref();
    void this.poll();
  }

  /** Claims and starts what it can now (also called right after a job is queued, by a request
   *  whose deadline the jobs must not inherit). */
  async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = unbounded(() => this.claim()).finally(() => (this.polling = undefined));
    await this.polling;
  }

  private async claim(): Promise<void> {
    try {
      await recoverStale(this.o.db, this.o.staleMs ?? 30_000, this.worker, this.o.announce);
      while (!this.stopped && this.running.size < this.o.maxRunning) {
        const job = await claimNext(this.o.db, this.worker, this.o.maxRunning);
        if (!job) break;
        // A run that fails to record its end (the database gone) is logged, never left unhandled.
        const p = this.run(job)
          .catch((e: unknown) => this.o.log(`job ${job.id}: ${(e as Error).message}`))
          .finally(() => this.running.delete(p));
        this.running.add(p);
      }
      if (this.queueDown) this.o.log('job queue: the database answers again; claiming jobs');
      this.queueDown = false;
    } catch (e) {
      // Said once per outage, not at every poll.
      if (!this.queueDown || !isOutage(e)) this.o.log(`job queue: ${(e as Error).message}`);
      this.queueDown = isOutage(e);
    }
  }

  private async run(job: JobRecord): Promise<void> {
    const { db } = this.o;
    const handler = this.handlers.get(job.kind);
    if (!handler) {
      await failJob(db, job.id, this.worker, `this server does not run jobs of kind ${job.kind}`, this.o.announce);
      return;
    }
    const progress = new ProgressWriter(db, job.id, this.worker, handler.stage);
    // Four beats within the stale limit, until the job's end is written: a busy process's job, or
    // one waiting for the database, never looks to anyone as if its process had died.
    const heartbeat = setInterval(() => void progress.write(), this.o.heartbeatMs ?? Math.min(2000, (this.o.staleMs ?? 30_000) / 4));
    this.kinds.set(job.kind, (this.kinds.get(job.kind) ?? 0) + 1);
    try {
      let end: () => Promise<unknown>;
      try {
        const result = await handler.run(job, { progress, stopped: () => this.stopped });
        end = () => finishJob(db, job.id, this.worker, result, this.o.announce);
      } catch (e) {
        if (e instanceof JobStopped) return;
        const message = (e as Error).message;
        if (isOutage(e)) {
          this.o.log(`job ${job.id}: the database was unavailable (${message}); handed back to the queue`);
          end = () => requeueJob(db, job.id, this.worker, 'queued again: the database was unavailable');
        } else {
          if (!(e instanceof JobRefused)) this.o.log(`job ${job.id} failed: ${message}`);
          end = () => failJob(db, job.id, this.worker, e instanceof JobRefused ? message : handler.failure(message), this.o.announce);
        }
      }
      await this.whenDatabaseIsBack(end);
    } finally {
      clearInterval(heartbeat);
      const left = this.kinds.get(job.kind)! - 1;
      if (left > 0) this.kinds.set(job.kind, left);
      else this.kinds.delete(job.kind);
    }
  }

  /** Writes a job's end, again and again while the database is unavailable (each try a second or
   *  a few after the last), until it lands or the runner stops (close() hands the job back). */
  private async whenDatabaseIsBack(write: () => Promise<unknown>): Promise<void> {
    for (let wait = 500; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        await write();
        return;
      } catch (e) {
        if (!isOutage(e) || this.stopped) throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Stops claiming, hands running jobs back to the queue (another process, or the next start,
   *  takes them up), and stops the workers. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    // A claim in flight may still start a job: it is handed back below with the others.
    await this.polling;
    const released = await releaseWorker(this.o.db, this.worker).catch(() => []);
    if (released.length) this.o.log(`handed ${released.length} running job(s) back to the queue`);
    await this.o.pool.destroy();
    await Promise.allSettled([...this.running]);
  }
}
