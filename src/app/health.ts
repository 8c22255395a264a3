// What `GET /api/health` reports: whether the API, the model, the evaluation, the database and the
// live feed work, and what this process holds (organizations' histories, running jobs, memory). The
// report is made here, from the running state the composition root hands in, in the shape the
// contract declares (contract/health.ts); the HTTP layer only sends it.

import { isProblem, type MetricsFile, type ModelBundle, type ModelProblem } from '../model/bundle-types.ts';
import type { Db } from '../storage/db.ts';
import type { LiveTail } from '../live/tail.ts';
import type { Tenants } from '../live/tenants.ts';
import type { Health } from '../contract/health.ts';
import { feedHealth } from './feed-health.ts';

export interface HealthSources {
  db: Pick<Db, 'ping' | 'kind'>;
  model: ModelBundle | ModelProblem;
  metrics: MetricsFile | ModelProblem;
  tail: Pick<LiveTail, 'status'>;
  tenants: Pick<Tenants, 'size' | 'heldTransactions'>;
  authConfigured: boolean;
  sandboxSize: () => number;
  jobsRunning: () => Record<string, number>;
  startedAt: number;
  startup: Record<string, number>;
}

const mb = (bytes: number) => Math.round(bytes / 104_857.6) / 10;

function memoryNow(): Health['memory'] {
  const m = process.memoryUsage();
  return { rss_mb: mb(m.rss), heap_used_mb: mb(m.heapUsed), heap_total_mb: mb(m.heapTotal), array_buffers_mb: mb(m.arrayBuffers) };
}

export async function healthReport(s: HealthSources, now = Date.now()): Promise<Health> {
  const database = await s.db.ping();
  const feed = feedHealth(s.tail.status(), database, now);
  const { model, metrics } = s;
  return {
    status: database && feed.state === 'current' && !isProblem(model) ? 'ok' : 'degraded',
    api: 'ok',
    model: isProblem(model)
      ? { status: 'unavailable', id: null, version: null, reason: model.reason, message: model.message }
      : { status: 'ok', id: model.file.id, version: model.file.version, reason: null, message: null },
    evaluation: isProblem(metrics) ? { status: 'unavailable', reason: metrics.reason } : { status: 'ok', reason: null },
    database: { status: database ? 'ok' : 'unavailable', kind: s.db.kind },
    feed,
    auth_configured: s.authConfigured,
    history_transactions: s.sandboxSize(),
    organizations_loaded: s.tenants.size,
    transactions_held: s.tenants.heldTransactions(),
    jobs_running: s.jobsRunning(),
    memory: memoryNow(),
    started_at: new Date(s.startedAt).toISOString(),
    startup_ms: s.startup,
  };
}
