// Schema migrations: the plain `.sql` files in `migrations/` (named `001_history.sql`,
// `002_....sql`, ...), applied in order when the database is opened, each exactly once, each in its
// own transaction (a file that fails leaves nothing behind), and recorded in `schema_migrations`.
//
// Several service processes may open one PostgreSQL at the same moment: every migration
// transaction first takes a transaction-scoped advisory lock, then checks again whether its file
// was applied meanwhile, so each file runs once however many processes race. (PGlite is one
// process; the same lock costs nothing there.)

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend, ScriptQueryable } from './db.ts';
import { StorageError, messageOf } from './errors.ts';

/** The repository's migrations folder. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** An arbitrary constant shared by every process of this service: the migration lock's key. */
const MIGRATION_LOCK_KEY = 7_340_215_001;

const FILE_NAME = /^(\d+)_[A-Za-z0-9_-]+\.sql$/;

export interface Migration {
  /** The file name without `.sql`, e.g. `001_history`: the key in schema_migrations. */
  version: string;
  file: string;
  sql: string;
}

/** The migration files of a folder, in order. Other files are ignored; two files with one number fail. */
export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new StorageError('migration_failed', `cannot read the migrations folder ${dir}: ${messageOf(err)}`);
  }
  const found = names
    .map((file) => ({ file, match: FILE_NAME.exec(file) }))
    .filter((f): f is { file: string; match: RegExpExecArray } => f.match !== null)
    .map((f) => ({ file: f.file, number: Number(f.match[1]) }))
    .sort((a, b) => a.number - b.number);
  for (let i = 1; i < found.length; i++) {
    if (found[i]!.number === found[i - 1]!.number) {
      throw new StorageError('migration_failed', `two migrations share the number ${found[i]!.number}: ${found[i - 1]!.file} and ${found[i]!.file}`);
    }
  }
  return Promise.all(found.map(async ({ file }) => ({ version: file.slice(0, -'.sql'.length), file, sql: await readFile(join(dir, file), 'utf8') })));
}

async function lock(tx: ScriptQueryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
}

/** Applies the migrations not yet recorded; returns the versions this call applied. */
export async function migrate(db: Backend, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const applied = await guard('preparing schema_migrations', () =>
    db.transaction(async (tx) => {
      await lock(tx);
      await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const rows = await tx.query<{ version: string }>('SELECT version FROM schema_migrations');
      return new Set(rows.map((r) => r.version));
    }),
  );

  const done: string[] = [];
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    const ran = await guard(`migration ${m.file}`, () =>
      db.transaction(async (tx) => {
        await lock(tx);
        // Another process may have applied it while this one waited for the lock.
        if ((await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version])).length > 0) return false;
        await tx.exec(m.sql);
        await tx.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [m.version]);
        return true;
      }),
    );
    if (ran) done.push(m.version);
  }
  return done;
}

/** Runs a migration step; a failure other than an unreachable database becomes `migration_failed`. */
async function guard<R>(what: string, step: () => Promise<R>): Promise<R> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof StorageError && err.code === 'database_unavailable') throw err;
    const sqlState = err instanceof StorageError ? err.sqlState : undefined;
    throw new StorageError('migration_failed', `${what} failed: ${messageOf(err)}`, sqlState);
  }
}
