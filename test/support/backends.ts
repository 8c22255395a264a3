// Runs each storage test on both back ends: PGlite in a temporary directory always, and PostgreSQL
// when TEST_DATABASE_URL is set. Every case gets a database of its own. For PGlite, `open()` starts a
// new directory the way the service does (a copy of the migrated template `npm ci` writes, then any
// newer migrations), and `openBackend()`, for migrate's own tests, a copy of a directory initialised
// once per process and never migrated (initdb and the migrations each cost seconds in WebAssembly,
// a copy a fraction of that). For PostgreSQL a uniquely named schema, selected through the URL's
// `search_path`, dropped when the case ends, so repeated and parallel runs never collide.
//
// Without TEST_DATABASE_URL the PostgreSQL half is skipped with a visible reason, except under CI
// (CI=true), where it fails (components.ts): CI must prove both back ends.

import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import t from 'tap';
import { needs, TEST_DATABASE_URL } from './components.ts';
import type { Backend, Db } from '../../src/storage/db.ts';
import { openDatabase, type OpenOptions } from '../../src/storage/open.ts';
import { openPglite } from '../../src/storage/pglite.ts';
import { openPostgres } from '../../src/storage/postgres.ts';

export type Kind = 'pglite' | 'postgres';
/** A subtest, as tap passes it to a test's callback. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

export interface Fixture {
  kind: Kind;
  /** Opens this case's database the way the service does (applying migrations); closed at the end. */
  open(): Promise<Db>;
  /** Opens the raw back end without migrating (for migrate's own tests); closed at the end. */
  openBackend(): Promise<Backend>;
  /** The options open() uses. */
  options: OpenOptions;
}

export { TEST_DATABASE_URL };

const scratch = await mkdtemp(join(tmpdir(), 'storage-test-'));
let admin: postgres.Sql | undefined;
t.teardown(async () => {
  await admin?.end({ timeout: 5 });
  await rm(scratch, { recursive: true, force: true });
});

let template: Promise<string> | undefined;
/** A PGlite data directory initialised once per test process, copied for each case. */
function pgliteTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = join(scratch, 'template');
    const pg = await PGlite.create(dir);
    await pg.close();
    return dir;
  })();
  return template;
}

let counter = 0;
async function fixture(t: Test, kind: Kind): Promise<Fixture> {
  const opened: Db[] = [];
  t.teardown(async () => {
    for (const db of opened) await db.close().catch(() => {});
  });
  const track = <D extends Db>(db: D): D => {
    opened.push(db);
    return db;
  };

  if (kind === 'pglite') {
    const dataDir = join(scratch, `case-${++counter}`);
    const pgDir = join(dataDir, 'pglite');
    const options: OpenOptions = { dataDir };
    return {
      kind,
      options,
      open: async () => track(await openDatabase(options)),
      openBackend: async () => {
        if (!existsSync(pgDir)) await cp(await pgliteTemplate(), pgDir, { recursive: true });
        return track(await openPglite(pgDir, null));
      },
    };
  }

  admin ??= postgres(TEST_DATABASE_URL!, { max: 2, onnotice: () => {} });
  const schema = `storage_test_${process.pid}_${++counter}_${randomBytes(4).toString('hex')}`;
  await admin.unsafe(`CREATE SCHEMA "${schema}"`);
  t.teardown(async () => {
    await admin!.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  const url = new URL(TEST_DATABASE_URL!);
  url.searchParams.set('search_path', schema);
  const options: OpenOptions = { databaseUrl: url.toString(), dataDir: join(scratch, `case-${counter}`) };
  return {
    kind,
    options,
    open: async () => track(await openDatabase(options)),
    openBackend: async () => track(await openPostgres(url.toString())),
  };
}

/** Registers `name` once per back end; `only` limits it to one (with the reason the other is not run). */
export function eachBackend(name: string, fn: (t: Test, fx: Fixture) => Promise<void>, only?: { kind: Kind; because: string }): void {
  for (const kind of ['pglite', 'postgres'] as const) {
    const title = `${name} [${kind}]`;
    if (only && only.kind !== kind) {
      t.test(title, { skip: only.because }, async () => {});
      continue;
    }
    const skip = kind === 'postgres' ? needs('postgres') : false;
    t.test(title, { skip }, async (t) => fn(t, await fixture(t, kind)));
  }
}
