// Opening the database: the back end the configuration names (PostgreSQL for DATABASE_URL, else the
// embedded PGlite under DATA_DIR), migrated to the current schema before anyone sees it. Apart from
// db.ts's interface, so that the back ends and the migrations, which implement and use that
// interface, are not imported by it in turn.

import { join } from 'node:path';
import type { Backend, Db } from './db.ts';
import { migrate } from './migrate.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export interface OpenOptions {
  databaseUrl?: string;
  dataDir: string;
  /** PostgreSQL only: the longest a statement may run before the server cancels it (default 60 s). */
  statementTimeoutSeconds?: number;
  /** Where a warning line goes (the embedded database made without its template, and why). */
  log?: (line: string) => void;
}

/**
 * DATABASE_URL set → PostgreSQL via postgres.js; unset (or empty) → PGlite stored in
 * `${dataDir}/pglite`. Applies migrations before returning. Throws StorageError
 * (`database_unavailable`, `migration_failed`).
 */
export async function openDatabase(o: OpenOptions): Promise<Db> {
  const db: Backend = o.databaseUrl
    ? await openPostgres(o.databaseUrl, o.statementTimeoutSeconds)
    : await openPglite(join(o.dataDir, 'pglite'), undefined, o.log ? { log: o.log } : {});
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}
