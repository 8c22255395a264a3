// `npm start`: reads the configuration, starts the service (model, database, sandbox, live tail) and
// serves HTTP until SIGINT or SIGTERM, then shuts down gracefully: stops accepting connections,
// lets in-flight requests finish, stores the decisions it answered, hands its running jobs back to
// the queue and closes the database. Whatever happens, it exits within SHUTDOWN_TIMEOUT_SECONDS:
// its log lines go through streams that never block (log-stream.ts), and nothing waits for them at
// exit.
//
// With WEB_CONCURRENCY=N above 1 this process is the primary of N server processes (node:cluster)
// that share one port; each is a full server with its own live tail, so any of them can answer any
// request. The primary serves nothing: it starts them, starts a replacement for one that dies, and
// on SIGTERM or SIGINT stops them the same way and exits once they have (or at the deadline).

import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { holdAllocatorThresholds, settleMemory } from './addon/memory.ts';
import { startService } from './app/service.ts';
import { openApp } from './app/app.ts';
import { buildApp } from './http/app.ts';
import { drainLogs, stderrLog } from './http/log-stream.ts';
import { StorageError } from './storage/errors.ts';

const started = performance.now();
const who = cluster.isWorker ? `server ${cluster.worker!.id}: ` : '';
const say = (msg: string) => stderrLog().write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${who}${msg}\n`);

/** Exits at once with a message (a configuration that cannot work), never a stack trace. */
async function refuse(message: string): Promise<never> {
  say(message);
  await drainLogs(200);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  await refuse(`${e.message}\n(README, Configuration, lists every variable.)`);
}

/** Said once, by the process that was started. */
function warn(c: Config): void {
  if (c.ENVIRONMENT === 'production' && c.authConfigured && !c.COOKIE_SECURE) {
    say(
      'warning: ENVIRONMENT=production but COOKIE_SECURE is not true, so session cookies are not marked Secure and may travel over plain HTTP; set COOKIE_SECURE=true behind HTTPS',
    );
  }
}

/** Runs on the deadline, whatever the stop is still waiting for. */
function deadline(c: Config, onExpiry: () => void): void {
  setTimeout(() => {
    say(`shutdown took over ${c.SHUTDOWN_TIMEOUT_SECONDS} s (SHUTDOWN_TIMEOUT_SECONDS); exiting`);
    onExpiry();
    process.exit(1);
  }, c.SHUTDOWN_TIMEOUT_SECONDS * 1000).unref();
}

async function serve(c: Config): Promise<void> {
  holdAllocatorThresholds();
  if (!cluster.isWorker) {
    say(`starting (storage: ${c.DATABASE_URL ? 'PostgreSQL' : `embedded, ${c.DATA_DIR}`}; model: ${c.MODEL_DIR}; durability: ${c.DURABILITY})`);
    warn(c);
  }
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(c, { log: say });
  } catch (e) {
    // A database that refuses or cannot be reached at start (PostgreSQL still starting beside it,
    // in a composition): its reason in one line, and exit 1 for the supervisor to start it again.
    if (e instanceof StorageError) await refuse(`cannot start: ${e.message}`);
    throw e;
  }
  const app = await buildApp(openApp(service));
  // Start-up leaves its garbage scattered over the heap. Collect it once now, compacting so the
  // emptied pages go back to the system, and hand the C allocator's free pages back too.
  settleMemory();
  await app.listen({ port: c.PORT, host: c.HOST });
  // The port it listens on: PORT=0 takes one the system gives, which only this line tells.
  const address = app.server.address();
  const port = address !== null && typeof address === 'object' ? address.port : c.PORT;
  say(`ready on http://${c.HOST}:${port} (API reference at /api/docs; start-up steps ms: ${JSON.stringify(service.startup)})`);

  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: shutting down`);
    deadline(c, () => {});
    try {
      await app.close();
      await service.close();
      say('stopped');
      await drainLogs(200);
      process.exit(0);
    } catch (e) {
      say(`error while stopping: ${(e as Error).message}`);
      await drainLogs(200);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // A server whose primary is gone has nobody to stop it: it stops itself.
  if (cluster.isWorker) process.on('disconnect', () => void stop('the primary process is gone'));
}

/** A worker that dies sooner than this after starting was not able to start: the primary stops
 *  instead of starting it again and again. */
const START_GRACE_MS = 60_000;

function primary(c: Config): void {
  const n = c.WEB_CONCURRENCY;
  say(`starting ${n} server processes on one port (storage: PostgreSQL; model: ${c.MODEL_DIR}; durability: ${c.DURABILITY})`);
  warn(c);
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url) });
  let stopping = false;
  let exitCode = 0;
  let listening = 0;
  const startedAt = new Map<Worker, number>();
  const start = () => startedAt.set(cluster.fork(), performance.now());
  cluster.on('listening', () => {
    if (++listening === n) say(`ready: ${n} server processes on http://${c.HOST}:${c.PORT}`);
  });
  cluster.on('exit', (worker, code, signal) => {
    const lived = performance.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) {
        say('stopped');
        void drainLogs(200).then(() => process.exit(exitCode));
      }
      return;
    }
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (lived < START_GRACE_MS && listening < n) {
      say(`server ${worker.id} exited while starting (${how}); stopping`);
      void stopAll(1);
      return;
    }
    say(`server ${worker.id} exited (${how}); starting a replacement`);
    start();
  });
  const stopAll = async (code: number) => {
    stopping = true;
    exitCode = code;
    deadline(c, () => {
      for (const w of startedAt.keys()) w.process.kill('SIGKILL');
    });
    for (const w of startedAt.keys()) w.process.kill('SIGTERM');
    if (startedAt.size === 0) {
      await drainLogs(200);
      process.exit(code);
    }
  };
  const onSignal = (signal: string) => {
    if (stopping) return;
    say(`${signal}: stopping the server processes`);
    void stopAll(0);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  for (let i = 0; i < n; i++) start();
}

if (cluster.isPrimary && config!.WEB_CONCURRENCY > 1) primary(config!);
else await serve(config!);
