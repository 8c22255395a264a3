// Test helpers for the HTTP service: a real service (real model, real database, real history)
// started in a temporary data directory, and the real Fastify app around it for `inject`.
// `backends()` lists the storage back ends to run on: the embedded PGlite always, and PostgreSQL
// when TEST_DATABASE_URL is set (required when CI=true, so CI cannot skip it silently).

import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import postgres from 'postgres';
import { loadConfig, type Config } from '../../src/config.ts';
import { buildApp, type AppOptions } from '../../src/http/app.ts';
import { startService, type Service, type StartOptions } from '../../src/app/service.ts';
import { openApp } from '../../src/app/app.ts';
import { dataDir as newDataDir } from './data-dir.ts';
import { tempDir } from './temp.ts';
import { needs, TEST_DATABASE_URL } from './components.ts';
import type { Test } from 'tap';
import type { Db } from '../../src/storage/db.ts';
import { openDatabase } from '../../src/storage/open.ts';

export interface Backend {
  name: 'pglite' | 'postgres';
  databaseUrl?: string;
}

export function backends(): Backend[] {
  needs('postgres');
  const url = TEST_DATABASE_URL;
  return [{ name: 'pglite' }, ...(url ? [{ name: 'postgres' as const, databaseUrl: url }] : [])];
}

/** Drops a test database, whatever still works on it. FORCE ends the test's own sessions, but a
 *  non-superuser may not end an autovacuum worker (42501: it runs as no role), which a large import
 *  leaves working for seconds; a plain DROP ends autovacuum workers itself and refuses (55006) only
 *  while one of our sessions is open, so the two alternate until one succeeds. */
export async function dropDatabase(admin: postgres.Sql, name: string): Promise<void> {
  let force = true;
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name}${force ? ' WITH (FORCE)' : ''}`);
      return;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (attempt >= 20 || (code !== '42501' && code !== '55006')) throw e;
      force = code === '55006';
      if (force) await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** A new, empty PostgreSQL database on the test server, so test files never share state. */
export async function freshDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(baseUrl, { max: 1, onnotice: () => {} });
      try {
        await dropDatabase(a, name);
      } finally {
        await a.end();
      }
    },
  };
}

export interface Running {
  service: Service;
  app: FastifyInstance;
  config: Config;
  dataDir: string;
  close(): Promise<void>;
}

export { tempDir };

/** A copy of the built-in model folder that a test may damage. */
export function modelCopy(): string {
  const dir = join(tempDir('model-'), 'builtin');
  cpSync('models/builtin', dir, { recursive: true });
  return dir;
}

/** A new database on the test PostgreSQL server, opened as the service opens one and closed and
 *  dropped with the test: for tests of several writers at once (`url` for the others). */
export async function openFreshDatabase(t: Test): Promise<{ db: Db; url: string }> {
  const fresh = await freshDatabase(TEST_DATABASE_URL!);
  const db = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
  t.teardown(async () => {
    await db.close();
    await fresh.drop();
  });
  return { db, url: fresh.url };
}

/** Starts the service on a back end. For PostgreSQL, pass `databaseUrl` from `freshDatabase` to
 *  reuse one database across restarts; otherwise each start gets a new one. */
export async function start(
  o: {
    backend?: Backend;
    dataDir?: string;
    databaseUrl?: string;
    overrides?: Partial<Config>;
    clock?: () => number;
    logger?: AppOptions['logger'];
    startOptions?: StartOptions;
  } = {},
): Promise<Running> {
  const dataDir = o.dataDir ?? newDataDir('data-');
  let databaseUrl = o.databaseUrl;
  let drop: (() => Promise<void>) | undefined;
  if (!databaseUrl && o.backend?.databaseUrl) {
    const fresh = await freshDatabase(o.backend.databaseUrl);
    databaseUrl = fresh.url;
    drop = fresh.drop;
  }
  const config = loadConfig({}, { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...o.overrides });
  const service = await startService(config, { ...o.startOptions, ...(o.clock ? { clock: o.clock } : {}) });
  const app = await buildApp(openApp(service), { logger: o.logger ?? false });
  await app.ready();
  return {
    service,
    app,
    config,
    dataDir,
    async close() {
      await app.close();
      await service.close();
      await drop?.();
    },
  };
}
