// `npm start`: reads the configuration, starts the service (model, database, sandbox) and serves
// HTTP until SIGINT or SIGTERM, then shuts down gracefully: stops accepting connections, lets
// in-flight requests finish, stores the decisions it answered, hands its running jobs back to the
// queue and closes the database. Whatever happens, it exits within SHUTDOWN_TIMEOUT_SECONDS: its
// log lines go through streams that never block (log-stream.ts), and nothing waits for them at exit.

import { loadConfig } from '../config.ts';
import { holdAllocatorThresholds, settleMemory } from '../engine/memory.ts';
import { startService } from '../service/service.ts';
import { buildApp } from './app.ts';
import { drainLogs, stderrLog } from './log-stream.ts';

holdAllocatorThresholds();
const started = performance.now();
const config = loadConfig();
const say = (msg: string) => stderrLog().write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${msg}\n`);
say(`starting (storage: ${config.DATABASE_URL ? 'PostgreSQL' : `embedded, ${config.DATA_DIR}`}; model: ${config.MODEL_DIR})`);
if (config.ENVIRONMENT === 'production' && config.authConfigured && !config.COOKIE_SECURE) {
  say('warning: ENVIRONMENT=production but COOKIE_SECURE is not true, so session cookies are not marked Secure and may travel over plain HTTP; set COOKIE_SECURE=true behind HTTPS');
}
const service = await startService(config, { log: say });
const app = await buildApp(service);
// Start-up reads the whole history page by page and leaves that garbage scattered over the heap.
// Collect it once now, compacting so the emptied pages go back to the system, and hand the C
// allocator's free pages back too: about 90 MB less resident memory from the first request on.
settleMemory();
await app.listen({ port: config.PORT, host: config.HOST });
say(`ready on http://${config.HOST}:${config.PORT} (API reference at /api/docs; start-up steps ms: ${JSON.stringify(service.startup)})`);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  say(`${signal}: shutting down`);
  const force = setTimeout(() => {
    say(`shutdown took over ${config.SHUTDOWN_TIMEOUT_SECONDS} s (SHUTDOWN_TIMEOUT_SECONDS); exiting`);
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_SECONDS * 1000);
  force.unref();
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
