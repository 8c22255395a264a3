// Migrations are applied in order, each exactly once, each in a transaction: reopening applies
// nothing new, a failing file leaves nothing behind and is not recorded, and several processes
// opening one PostgreSQL at the same moment apply each file once between them.

import t from 'tap';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageError } from '../../src/storage/errors.ts';
import { openDatabase } from '../../src/storage/open.ts';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../src/storage/migrate.ts';
import { eachBackend } from '../support/backends.ts';

/** A temporary folder, removed when the test file ends. */
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A migrations folder holding the repository's migrations plus the given extra files. */
async function migrationsWith(extra: Record<string, string>): Promise<string> {
  const dir = await tempDir();
  for (const m of await readMigrations()) await copyFile(join(MIGRATIONS_DIR, m.file), join(dir, m.file));
  for (const [file, sql] of Object.entries(extra)) await writeFile(join(dir, file), sql);
  return dir;
}

t.test('the repository has migrations numbered in order, starting with 001_history', async (t) => {
  const migrations = await readMigrations();
  t.equal(migrations[0]?.version, '001_history');
  t.strictSame(
    migrations.map((m) => m.version),
    [...migrations.map((m) => m.version)].sort(),
  );
});

t.test('two files with one number are refused', async (t) => {
  const dir = await tempDir();
  await writeFile(join(dir, '001_a.sql'), 'SELECT 1');
  await writeFile(join(dir, '001_b.sql'), 'SELECT 1');
  await writeFile(join(dir, 'README.md'), 'ignored');
  await t.rejects(readMigrations(dir), { name: 'StorageError', code: 'migration_failed' });
});

eachBackend('opening applies every migration once and records it; reopening applies nothing', async (t, fx) => {
  const expected = (await readMigrations()).map((m) => m.version);
  const db = await fx.open();
  const rows = await db.query<{ version: string; applied_at: Date }>('SELECT version, applied_at FROM schema_migrations ORDER BY version');
  t.strictSame(
    rows.map((r) => r.version),
    expected,
  );
  t.ok(rows.every((r) => r.applied_at instanceof Date));
  t.strictSame(await db.query(`SELECT to_regclass('transactions') IS NOT NULL AS t, to_regclass('service_meta') IS NOT NULL AS m`), [{ t: true, m: true }]);
  await db.close();

  const again = await fx.open();
  t.strictSame(await again.query('SELECT version, applied_at FROM schema_migrations ORDER BY version'), rows, 'nothing re-applied');
  await again.close();

  const backend = await fx.openBackend();
  t.strictSame(await migrate(backend), [], 'migrate reports nothing to do');
});

eachBackend('a new migration is applied alone, after the ones already there', async (t, fx) => {
  await (await fx.open()).close();
  const dir = await migrationsWith({ '900_more.sql': 'CREATE TABLE more_things (id int PRIMARY KEY);\nINSERT INTO more_things VALUES (1), (2);' });
  const backend = await fx.openBackend();
  t.strictSame(await migrate(backend, dir), ['900_more']);
  t.strictSame(await backend.query('SELECT count(*) AS n FROM more_things'), [{ n: 2 }]);
  t.strictSame(await migrate(backend, dir), []);
  t.strictSame(
    (await backend.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version),
    [...(await readMigrations()).map((m) => m.version), '900_more'],
  );
});

eachBackend('a failing migration is migration_failed, leaves nothing behind and is not recorded', async (t, fx) => {
  const dir = await migrationsWith({
    '900_good.sql': 'CREATE TABLE good_one (id int);',
    '901_bad.sql': 'CREATE TABLE half_done (id int);\nINSERT INTO half_done VALUES (1);\nSELECT no_such_function();',
  });
  const backend = await fx.openBackend();
  const err = await migrate(backend, dir).catch((e: unknown) => e);
  t.ok(err instanceof StorageError);
  t.equal((err as StorageError).code, 'migration_failed');
  t.match((err as StorageError).message, /901_bad\.sql/);
  t.strictSame(await backend.query(`SELECT to_regclass('good_one') IS NOT NULL AS good, to_regclass('half_done') IS NOT NULL AS half`), [
    { good: true, half: false },
  ]);
  t.notOk(
    (await backend.query<{ version: string }>('SELECT version FROM schema_migrations')).some((r) => r.version === '901_bad'),
    'the failed file is not recorded',
  );
});

eachBackend('concurrent migrations on one database apply each file once', async (t, fx) => {
  // Each file appends to a log, so a second application would show as a second row.
  const dir = await migrationsWith({
    '900_log.sql': "CREATE TABLE migration_log (version text NOT NULL);\nINSERT INTO migration_log VALUES ('900');",
    '901_step.sql': "SELECT pg_sleep(0.05);\nINSERT INTO migration_log VALUES ('901');",
    '902_step.sql': "INSERT INTO migration_log VALUES ('902');",
  });
  if (fx.kind === 'postgres') {
    // Several processes: each its own connection pool.
    const opened = await Promise.all([1, 2, 3, 4].map(() => fx.openBackend()));
    const applied = await Promise.all(opened.map((b) => migrate(b, dir)));
    t.equal(applied.flat().length, new Set(applied.flat()).size, 'no version reported applied twice');
    await Promise.all(opened.map((b) => b.close()));
  } else {
    // One process, one PGlite: concurrent calls on the same handle.
    const backend = await fx.openBackend();
    await Promise.all([migrate(backend, dir), migrate(backend, dir), migrate(backend, dir)]);
    await backend.close();
  }
  const db = await fx.open();
  t.strictSame(await db.query('SELECT version, count(*) AS n FROM migration_log GROUP BY version ORDER BY version'), [
    { version: '900', n: 1 },
    { version: '901', n: 1 },
    { version: '902', n: 1 },
  ]);
  t.strictSame(await db.query('SELECT count(*) AS n, count(DISTINCT version) AS d FROM schema_migrations'), [
    { n: 3 + (await readMigrations()).length, d: 3 + (await readMigrations()).length },
  ]);
});

eachBackend(
  'two service processes opening one fresh PostgreSQL at once both succeed, migrating once',
  async (t, fx) => {
    const settled = await Promise.allSettled([openDatabase(fx.options), openDatabase(fx.options), openDatabase(fx.options)]);
    const opened = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    t.teardown(() => Promise.all(opened.map((db) => db.close())).then(() => {}));
    t.strictSame(
      settled.map((s) => s.status),
      ['fulfilled', 'fulfilled', 'fulfilled'],
      'every open succeeds',
    );
    const rows = await opened[0]!.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    t.strictSame(
      rows.map((r) => r.version),
      (await readMigrations()).map((m) => m.version),
    );
    t.strictSame(await opened[1]!.query('SELECT count(*) AS n FROM transactions'), [{ n: 0 }]);
  },
  { kind: 'postgres', because: 'PGlite is one process: two processes never open one data directory' },
);
