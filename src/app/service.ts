// The running service's state, assembled once at start and owned here: configuration, database,
// the loaded model and its evaluation (or the reason either is unavailable), the public sandbox
// (the example history guests score against), each organization's live history (loaded on first
// use) and the live tail that keeps them in step with every process sharing the database, their
// weekly ring analyses (queued when due, read in when stored), the scorer, and the decision log
// that stores what organizations score. `startService` times each start-up step (reported by
// /api/health and the start log); `close` flushes and shuts down.

import { join } from 'node:path';
import { loadModelAndMetrics } from '../model/bundle.ts';
import { isProblem, type MetricsFile, type ModelBundle, type ModelProblem } from '../model/bundle-types.ts';
import type { Config } from '../config.ts';
import { DEFAULT_LABEL_DELAY_MS } from '../domain/history/history.ts';
import { Scorer } from '../scoring/scorer.ts';
import type { Db } from '../storage/db.ts';
import { openDatabase } from '../storage/open.ts';
import { DatasetFiles, expireDue, liveStoredNames, sweepOrphans } from '../storage/datasets.ts';
import { JobRunner } from '../jobs/runner.ts';
import { WorkerPool } from '../jobs/worker-pool.ts';
import type { Compare } from './decisions/challenger-report.ts';
import { scoreDatasetHandler } from '../jobs/score-dataset-job.ts';
import { historyImportHandler } from '../jobs/history-import-job.ts';
import { ringsHandler } from '../jobs/rings-job.ts';
import { backtestHandler } from '../jobs/backtest-job.ts';
import { Sandbox } from './sandbox.ts';
import type { DecisionLog } from '../live/decision-log.ts';
import type { DecisionSubscriptions } from '../live/decision-subscriptions.ts';
import type { Tenants } from '../live/tenants.ts';
import { Live } from '../live/process-state.ts';
import type { LiveTail } from '../live/tail.ts';
import type { RingWindows } from '../live/ring-windows.ts';
import { Accounts } from './access/accounts.ts';
import type { TokenVerifierOptions } from './access/tokens.ts';
import { ScoreAndRecord } from './score-and-record.ts';
import { customBundle } from '../model/custom.ts';
import { customModelBoosters, getCustomModel } from '../storage/models-store.ts';
import { sessionSecret } from '../storage/server-secret.ts';
import { SecretBox } from './access/secret-box.ts';
import { WebhookDeliverer, type DelivererTimings } from '../jobs/webhook-deliverer.ts';
import { DriftWatch } from './webhooks/drift-watch.ts';
import { SlaWatch } from './cases/sla-watch.ts';
import { DataProtectionSweeper, SWEEPER_DEFAULTS, type SweeperOptions } from './data-protection/sweeper.ts';
import { announceJob } from './datasets/job-view.ts';

/** How old a file in the uploads directory must be before the sweeper removes it for belonging
 *  to no dataset (an upload in progress is stored a moment before it is recorded). */
const ORPHAN_GRACE_MS = 3_600_000;

export interface Service {
  config: Config;
  db: Db;
  model: ModelBundle | ModelProblem;
  metrics: MetricsFile | ModelProblem;
  /** Undefined when no model is loaded (every scoring route then answers 503). */
  scorer: Scorer | undefined;
  /** The public sandbox: the example history, read-only, that guests score against. */
  sandbox: Sandbox;
  /** Each organization's live history, loaded on first use. */
  tenants: Tenants;
  /** Where organizations' scored transactions and decisions are stored (DURABILITY). */
  decisionLog: DecisionLog;
  /** Which organizations may have an endpoint subscribed to decision events (read again at once
   *  after this process changes an endpoint). */
  subscriptions: DecisionSubscriptions;
  /** This process's tail of the live feed: what any process records reaches `tenants` through it. */
  tail: LiveTail;
  /** Each organization's weekly ring analyses: queued when due, read into the tenants. */
  rings: RingWindows;
  /** The model's label delay (imported labels are known that long after their transaction). */
  labelDelay: number;
  /** Uploaded files (DATA_DIR/uploads). */
  datasets: DatasetFiles;
  /** The scorer of an organization's active custom model (cached; models never change), with a
   *  note when it cannot be used and the built-in model scores instead. */
  scorerForModel(id: string): Promise<{ scorer: Scorer; note?: string } | undefined>;
  /** Each channel's feature names of a model that scored a stored transaction (a custom model
   *  shares the built-in model's boosters, so their features); undefined without a model. */
  featureNames(modelId: string): Promise<readonly (readonly string[])[] | undefined>;
  /** A challenger against the active model over rows both scored (compareModels), in a worker
   *  thread; undefined without a model. */
  compare: Compare | undefined;
  /** Scoring an organization's transaction and recording it, idempotently (POST /api/v1/risk/score). */
  scoreAndRecord: ScoreAndRecord;
  /** Sign-in, sessions and API keys; undefined when sign-in is not configured. */
  /** Keys, sessions and sign-in; undefined only on PostgreSQL without SESSION_SECRET. Sign-in also
   *  needs AUTHPROVIDER_URL (`config.authConfigured`). */
  accounts: Accounts | undefined;
  /** Seals the secrets the service must use again (webhook signing secrets); undefined without a hashing secret. */
  secretBox: SecretBox | undefined;
  /** This process's webhook deliverer (undefined without a hashing secret: no endpoint can sign). */
  webhooks: WebhookDeliverer | undefined;
  /** Each completed week's drift verdict, for the organizations whose endpoints subscribe to its changes. */
  driftWatch: DriftWatch;
  /** Marks cases past their due time, each once across processes (`case.sla_breached`). */
  slaWatch: SlaWatch;
  /** Runs the erasures requested and sweeps each organization's expired data (data protection). */
  dataProtection: DataProtectionSweeper;
  /** The hashing secret (keys, sessions, customers' keyed hashes); undefined on PostgreSQL without SESSION_SECRET. */
  secret: string | undefined;
  /** Scoring jobs of this process (undefined without a model). */
  jobs: JobRunner | undefined;
  /** Deletes the files of datasets past their retention; returns how many (runs on a timer too). */
  sweepExpired(): Promise<number>;
  startedAt: number;
  /** The service's clock (epoch ms): what every use case calls now. */
  clock: () => number;
  /** Milliseconds per start-up step. */
  startup: Record<string, number>;
  close(): Promise<void>;
}

export interface StartOptions {
  log?: (msg: string) => void;
  clock?: () => number;
  /** Token verification settings beyond the configuration (tests shorten the key-set cooldown). */
  auth?: Partial<TokenVerifierOptions>;
  /** Webhook delivery timings (tests shorten the retry schedule and the lease). */
  webhooks?: Partial<DelivererTimings>;
  /** The data-protection sweeper's timings (tests sweep on demand, in small batches). */
  dataProtection?: Partial<Omit<SweeperOptions, 'db' | 'clock' | 'log'>>;
}

export async function startService(config: Config, o: StartOptions = {}): Promise<Service> {
  const log = o.log ?? (() => {});
  const clock = o.clock ?? Date.now;
  const startup: Record<string, number> = {};
  let mark = performance.now();
  const step = (name: string) => {
    const t = performance.now();
    startup[name] = Math.round(t - mark);
    mark = t;
  };

  const loaded = loadModelAndMetrics(config.MODEL_DIR);
  if (isProblem(loaded.model)) log(`model unavailable: ${loaded.model.message}`);
  else if (isProblem(loaded.metrics)) log(`evaluation unavailable: ${loaded.metrics.message}`);
  step('model');
  // The database opens on its own thread (or over the network) while this one builds the
  // sandbox's history, which needs no database: start-up takes the longer of the two, not both.
  const opening = openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    statementTimeoutSeconds: config.DATABASE_STATEMENT_TIMEOUT_SECONDS,
    log,
  });
  opening.catch(() => {});
  const labelDelay = isProblem(loaded.model) ? DEFAULT_LABEL_DELAY_MS : loaded.model.file.training.label_delay_ms;
  const sandbox = new Sandbox(labelDelay, config.DATA_DIR);
  step('sandbox');
  const db = await opening;
  step('database');
  try {
    const live = new Live({
      db,
      durability: config.DURABILITY,
      labelDelay,
      clock,
      log,
      queued: () => void jobs?.poll(),
      commitDeadlineSeconds: config.SCORE_DEADLINE_SECONDS,
      spillDir: join(config.DATA_DIR, 'snapshots'),
    });
    const { tenants, decisionLog, tail, rings, subscriptions } = live;
    await tail.start();
    await subscriptions.start();
    step('tail');
    const datasets = new DatasetFiles(config.DATA_DIR);
    const sweepExpired = async () => {
      const names = await expireDue(db, new Date(clock()));
      for (const n of names) await datasets.remove(n);
      // Files no dataset owns (a crash between storing an upload and recording it), after an hour.
      const orphans = await sweepOrphans(datasets, await liveStoredNames(db), Date.now(), ORPHAN_GRACE_MS);
      if (orphans.length) log(`removed ${orphans.length} upload file(s) that belonged to no dataset`);
      return names.length;
    };
    // Retention sweeps: every minute, or more often when the retention itself is shorter.
    const sweepEvery = Math.max(1000, Math.min(60_000, (config.UPLOAD_RETENTION_HOURS * 3_600_000) / 2));
    const sweeper = setInterval(() => void sweepExpired().catch((e) => log(`retention sweep failed: ${(e as Error).message}`)), sweepEvery);
    sweeper.unref();
    const scorer = isProblem(loaded.model) ? undefined : new Scorer({ bundle: loaded.model, clock });
    const customScorers = new Map<string, { scorer: Scorer; note?: string }>();
    const scorerForModel = async (id: string) => {
      if (!scorer || isProblem(loaded.model)) return undefined;
      const cached = customScorers.get(id);
      if (cached) return cached;
      const m = await getCustomModel(db, id);
      if (!m) return { scorer };
      let entry: { scorer: Scorer; note?: string };
      if (m.base_model_id !== loaded.model.file.id) {
        entry = {
          scorer,
          note: `The organization's active model ${m.id} was made for base model ${m.base_model_id}, not the loaded ${loaded.model.file.id}: scored with the built-in model. Recreate it from the command line.`,
        };
      } else {
        const bundle = customBundle(loaded.model, m, m.settings.boosters ? await customModelBoosters(db, id) : new Map());
        entry =
          typeof bundle === 'string'
            ? {
                scorer,
                note: `The organization's active model ${m.id} cannot be loaded (${bundle}): scored with the built-in model. Train it again from the command line.`,
              }
            : { scorer: new Scorer({ bundle, clock }) };
      }
      customScorers.set(id, entry);
      return entry;
    };
    const featureNames = async (modelId: string) => (await scorerForModel(modelId))?.scorer.bundle.channels.map((c) => c.features);
    // Jobs run in this process by kind; the runner knows none of them. Their worker threads also
    // compare a challenger's backtest for the challengers' report (off the event loop).
    const pool = isProblem(loaded.model) ? undefined : new WorkerPool(config.MODEL_DIR, config.MAX_RUNNING_JOBS);
    const jobRunner = (pool: WorkerPool) => {
      return new JobRunner({
        db,
        dataDir: config.DATA_DIR,
        pool,
        maxRunning: config.MAX_RUNNING_JOBS,
        staleMs: config.JOB_STALE_SECONDS * 1000,
        log,
        announce: announceJob,
      })
        .register('score', scoreDatasetHandler({ db, datasets, pool, dataDir: config.DATA_DIR }))
        .register(
          'history_import',
          historyImportHandler({
            db,
            datasets,
            labelDelay,
            model: scorer?.bundle,
            example: async () => (await sandbox.built()).history.transactions,
            beforeImport: () => decisionLog.flush(),
            imported: (id) => live.imported(id),
            importing: (id) => live.importing(id),
          }),
        )
        .register('rings', ringsHandler(db, pool, labelDelay))
        .register('backtest', backtestHandler({ db, labelDelay, clock, featureNames }));
    };
    const jobs = pool ? jobRunner(pool) : undefined;
    await jobs?.start();
    step('jobs');
    await rings.start();
    step('rings');
    // API keys need only the hashing secret; sign-in also needs an identity provider (accounts.ts).
    const secret = sessionSecret(config).secret;
    const accounts = secret ? new Accounts(db, config, secret, clock, o.auth) : undefined;
    const secretBox = secret ? new SecretBox(secret) : undefined;
    const webhooks = secretBox
      ? new WebhookDeliverer({
          db,
          policy: { allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS },
          openSecret: (sealed) => secretBox.open(sealed),
          log,
          timings: o.webhooks,
        })
      : undefined;
    await webhooks?.start();
    const driftWatch = new DriftWatch({ deps: { db, model: loaded.model, scorer, scorerForModel, decisionLog }, clock, log });
    driftWatch.start();
    const slaWatch = new SlaWatch({ db, clock, log, everyMs: config.CASE_SLA_SWEEP_SECONDS * 1000 });
    slaWatch.start();
    const dataProtection = new DataProtectionSweeper({ db, clock, log, ...SWEEPER_DEFAULTS, ...o.dataProtection });
    dataProtection.start();
    step('webhooks');
    const scoreAndRecord = new ScoreAndRecord({ model: loaded.model, tenants, decisionLog, scorer, scorerFor: scorerForModel });
    return {
      scoreAndRecord,
      config,
      db,
      jobs,
      accounts,
      secretBox,
      webhooks,
      driftWatch,
      slaWatch,
      dataProtection,
      secret,
      model: loaded.model,
      metrics: loaded.metrics,
      scorer,
      scorerForModel,
      featureNames,
      compare: pool ? (rows, options) => pool.compare(rows, options) : undefined,
      sandbox,
      tenants,
      decisionLog,
      subscriptions,
      tail,
      rings,
      labelDelay,
      datasets,
      sweepExpired,
      startedAt: clock(),
      clock,
      startup,
      async close() {
        clearInterval(sweeper);
        await rings.stop();
        await driftWatch.stop();
        await slaWatch.stop();
        await dataProtection.stop();
        await webhooks?.stop();
        await jobs?.close();
        await accounts?.flushUse();
        await decisionLog.flush();
        await subscriptions.stop();
        await tail.stop();
        await tenants.stop();
        await db.close();
      },
    };
  } catch (e) {
    await db.close();
    throw e;
  }
}
