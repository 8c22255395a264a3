// Writes the embedded database's template (TEMPLATE_DIR in pglite.ts): a data directory made by
// initdb and migrated to the current schema, without the template databases initdb makes
// (template0 and template1, which the service never uses: it creates no databases), so that
// copying it is quick.
// Run by `npm ci` (scripts/db-template.mjs).

import { mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { migrate } from './migrate.ts';
import { TEMPLATE_DIR, openPglite } from './pglite.ts';

/** Replaces the template with a directory of the current migrations. */
export async function writeTemplate(dir = TEMPLATE_DIR): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  const work = await mkdtemp(join(dirname(dir), '.pglite-template-'));
  try {
    // Made by initdb, whatever template there is now.
    const db = await openPglite(join(work, 'pglite'), null);
    try {
      await migrate(db);
      await db.query(`UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')`);
      await db.query('DROP DATABASE template0');
      await db.query('DROP DATABASE template1');
      await db.query('CHECKPOINT');
    } finally {
      await db.close();
    }
    await rename(join(work, 'pglite'), dir);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
