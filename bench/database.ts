// The database a storage benchmark seeds and reads: the embedded one in a temporary directory, or,
// with DATABASE_URL, a schema of its own on that PostgreSQL server, dropped when the benchmark
// closes it. And the bulk load every seeding benchmark does the same way: the transactions table's
// secondary indexes dropped for the load and built again from their own definitions afterwards
// (building an index once is several times cheaper than maintaining it row by row; the
// constraints' indexes stay, and the schema ends as it was).

import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Db } from '../src/storage/db.ts';
import { openDatabase } from '../src/storage/open.ts';
import { tempDir } from '../test/support/temp.ts';

export interface BenchDatabase {
  db: Db;
  /** Closes the database and removes what the benchmark made: its schema, its directory. */
  close(): Promise<void>;
}

/** A fresh database named after the benchmark (`name`: letters and underscores); on PostgreSQL a
 *  statement may run for `statementTimeoutSeconds` (the service's default unless given: a seeding
 *  statement of 250,000 rows can take longer on a busy host). */
export async function benchDatabase(name: string, statementTimeoutSeconds?: number): Promise<BenchDatabase> {
  const dataDir = tempDir(`bench-${name}-`);
  const serverUrl = process.env.DATABASE_URL || undefined;
  if (!serverUrl) {
    const db = await openDatabase({ dataDir });
    return {
      db,
      async close() {
        await db.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = `bench_${name}_${randomBytes(4).toString('hex')}`;
  const url = new URL(serverUrl);
  url.searchParams.set('search_path', schema);
  const setup = await openDatabase({ databaseUrl: serverUrl, dataDir });
  await setup.query(`CREATE SCHEMA ${schema}`);
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir, ...(statementTimeoutSeconds ? { statementTimeoutSeconds } : {}) });
  return {
    db,
    async close() {
      await db.close();
      await setup.query(`DROP SCHEMA ${schema} CASCADE`);
      await setup.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `load` with the transactions table's secondary indexes dropped, then builds them again
 *  (with `maintenanceWorkMem` for the build). `query` runs one statement on the database loaded. */
export async function withoutSecondaryIndexes(
  query: (text: string) => Promise<unknown[]>,
  maintenanceWorkMem: string,
  load: () => Promise<void>,
): Promise<void> {
  const indexes = (await query(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
     WHERE i.indrelid = 'transactions'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
  )) as { name: string; def: string }[];
  for (const i of indexes) await query(`DROP INDEX ${i.name}`);
  await load();
  await query(`SET maintenance_work_mem = '${maintenanceWorkMem}'`);
  for (const i of indexes) await query(i.def);
  await query('RESET maintenance_work_mem');
}
