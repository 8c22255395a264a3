// The embedded database as the service opens it: PGlite on a thread of its own, statements kept
// prepared by their text, and a new data directory started as a copy of the install's template.
// - A new directory copied from a template has every migration, takes writes and reopens.
// - A template that cannot be opened, or none, is not fatal: the directory is made by initdb
//   instead, and a warning line says why (none when the template is used or not needed).
// - A statement kept prepared follows a change of its table's columns (it is prepared again).
// - Bytes sent for a bytea parameter come back byte for byte; an error keeps its SQLSTATE.
// - A notification reaches every listener of its channel, and one that stops hears no more.
// - Background work (an import's statements) lets the requests' statements go first: one sent while
//   background statements are queued waits behind the one running at most, and background work
//   still goes on when the requests never pause.
// - The thread starts without the main thread's module loaders (tsx here), whichever form they take,
//   and with the options `npm start` gives Node (V8's heap settings, which a thread refuses).

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../../src/storage/errors.ts';
import { migrate, readMigrations } from '../../src/storage/migrate.ts';
import { openPglite, withoutLoaders } from '../../src/storage/pglite.ts';
import { writeTemplate } from '../../src/storage/pglite-template.ts';
import { tempDir } from '../support/temp.ts';

const root = tempDir('pglite-thread-');
const template = join(root, 'template');

t.before(async () => {
  await writeTemplate(template);
});

t.test('a new directory starts as a copy of the template, with every migration', async (t) => {
  t.ok(existsSync(join(template, 'PG_VERSION')), 'the template is a data directory');
  const dir = join(root, 'from-template');
  const lines: string[] = [];
  const db = await openPglite(dir, template, { log: (line) => lines.push(line) });
  const applied = await db.query<{ n: number }>('SELECT count(*) AS n FROM schema_migrations');
  t.equal(applied[0]!.n, (await readMigrations()).length, 'every migration is there before any runs');
  t.same(await migrate(db), [], 'nothing is left to apply');
  const databases = await db.query<{ datname: string }>('SELECT datname FROM pg_database ORDER BY datname');
  t.same(
    databases.map((d) => d.datname),
    ['postgres'],
    'without the template databases initdb makes',
  );
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.close();
  const again = await openPglite(dir, join(root, 'no-template-now'), { log: (line) => lines.push(line) });
  t.same(await again.query('SELECT id FROM users'), [{ id: 'u1' }], 'a reopened directory is itself, not a new copy');
  await again.close();
  t.same(lines, [], 'no warning: the template was used, then not needed');
});

t.test('a new directory without a template is made by initdb, with a warning line', async (t) => {
  const lines: string[] = [];
  const missing = join(root, 'no-such-template');
  const db = await openPglite(join(root, 'without-template'), missing, { log: (line) => lines.push(line) });
  t.same(await db.query('SELECT to_regclass($1)::text AS t', ['schema_migrations']), [{ t: null }], 'a new, empty database');
  await db.close();
  t.equal(lines.length, 1, 'one line');
  t.match(
    lines[0],
    /^warning: the new embedded database in .*without-template was made by initdb, not copied from the template: there is no template in .*no-such-template \(npm ci writes it\)/,
  );
  const quiet: string[] = [];
  await (await openPglite(join(root, 'initdb-on-purpose'), null, { log: (line) => quiet.push(line) })).close();
  t.same(quiet, [], 'none when no template is wanted (as the template itself is written)');
});

t.test('a template that cannot be opened leaves the directory to initdb', async (t) => {
  const broken = join(root, 'broken');
  mkdirSync(join(broken, 'base'), { recursive: true });
  writeFileSync(join(broken, 'PG_VERSION'), '7\n');
  const dir = join(root, 'from-broken');
  const lines: string[] = [];
  const db = await openPglite(dir, broken, { log: (line) => lines.push(line) });
  t.same(await db.query('SELECT to_regclass($1)::text AS t', ['schema_migrations']), [{ t: null }], 'a new, empty database');
  t.ok((await migrate(db)).length > 0, 'which migrates as any new one');
  await db.close();
  t.equal(lines.length, 1, 'one warning line');
  t.match(
    lines[0],
    /^warning: the new embedded database in .*from-broken was made by initdb, not copied from the template: the template in .*broken cannot be opened \(.+\); /,
    'with the reason',
  );
  t.comment(lines[0]);
});

t.test('statements: kept by text, prepared again when their table changes; bytes and errors', async (t) => {
  const db = await openPglite(join(root, 'statements'), template);
  t.teardown(() => db.close());
  await db.query('CREATE TABLE things (id int PRIMARY KEY, name text)');
  await db.query(`INSERT INTO things VALUES (1, 'one')`);
  t.same(await db.query('SELECT * FROM things WHERE id = $1', [1]), [{ id: 1, name: 'one' }]);
  await db.query('ALTER TABLE things ADD COLUMN size int');
  t.same(await db.query('SELECT * FROM things WHERE id = $1', [1]), [{ id: 1, name: 'one', size: null }], 'the same text after a new column');
  const bytes = Buffer.from([0, 1, 2, 253, 254, 255, 92, 120]);
  const [row] = await db.query<{ b: Uint8Array; n: number }>('SELECT $1::bytea AS b, length($1::bytea) AS n', [bytes]);
  t.same(Buffer.from(row!.b), bytes, 'bytes come back as they were sent');
  t.equal(row!.n, bytes.length);
  const err = await db.query(`INSERT INTO things VALUES (1, 'again')`).catch((e: unknown) => e);
  t.ok(err instanceof StorageError && err.code === 'query_failed' && err.sqlState === '23505', 'a duplicate is a query_failed with its SQLSTATE');
  const inTx = await db
    .transaction(async (tx) => {
      await tx.query(`INSERT INTO things VALUES (2, 'two')`);
      await tx.query('SELECT 1 / 0');
    })
    .catch((e: unknown) => e);
  t.ok(inTx instanceof StorageError && inTx.sqlState === '22012', 'an error inside a transaction reaches its caller');
  t.same(await db.query('SELECT id FROM things ORDER BY id'), [{ id: 1 }], 'and nothing of it was kept');
});

t.test('notifications reach every listener of a channel until it stops', async (t) => {
  const db = await openPglite(join(root, 'notify'), template);
  t.teardown(() => db.close());
  const heard: string[] = [];
  let listening = 0;
  const stopA = await db.listen(
    'feed',
    (p) => heard.push(`a:${p}`),
    () => listening++,
  );
  const stopB = await db.listen(
    'feed',
    (p) => heard.push(`b:${p}`),
    () => listening++,
  );
  t.equal(listening, 2);
  await db.query(`SELECT pg_notify('feed', 'one')`);
  await stopA();
  await db.query(`SELECT pg_notify('feed', 'two')`);
  await stopB();
  await db.query(`SELECT pg_notify('feed', 'three')`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(heard.sort(), ['a:one', 'b:one', 'b:two']);
});

t.test("background statements let the requests' go first, and still go on under a load that never pauses", async (t) => {
  const db = await openPglite(join(root, 'background'), template);
  t.teardown(() => db.close());
  const order: string[] = [];
  const background = db.background();
  const queued = [1, 2, 3, 4].map((n) => background.query('SELECT pg_sleep(0.2)').then(() => void order.push(`background ${n}`)));
  // The first is sent a turn of the event loop after it was queued (the requests' turn), and the
  // second not before the first is answered: a request sent a few turns on comes between them.
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  await db.query('SELECT 1').then(() => void order.push('request'));
  await Promise.all(queued);
  t.same(order, ['background 1', 'request', 'background 2', 'background 3', 'background 4'], 'the request waited behind the running one only');

  const inTransaction = await background.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT 2 AS n'))[0]!.n);
  t.equal(inTransaction, 2, 'a background transaction runs as any other');

  // Requests one after another without a pause: a background statement still runs (after waiting
  // its longest), and the requests go on.
  let busy = true;
  let requests = 0;
  const load = (async () => {
    while (busy) {
      await db.query('SELECT pg_sleep(0.01)');
      requests++;
    }
  })();
  const [row] = await background.query<{ n: number }>('SELECT 3 AS n');
  busy = false;
  await load;
  t.equal(row!.n, 3, 'background work goes on while the requests never pause');
  t.ok(requests > 0, `${requests} requests answered meanwhile`);
});

t.test("the database's thread starts without the main thread's module loaders", async (t) => {
  t.same(
    withoutLoaders([
      '--import=tsx',
      '--max-old-space-size=512',
      '--require',
      './preflight.cjs',
      '--loader=x',
      '--experimental-loader',
      'y',
      '--enable-source-maps',
    ]),
    ['--max-old-space-size=512', '--enable-source-maps'],
    'both forms of each loader flag are left out, every other option kept',
  );
  // Opening the thread from a process with a loader: the next test, with tsx.
});

t.test("the database's thread starts under `npm start`'s Node options, with and without a loader", async (t) => {
  const script = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const flags = /^node\s+(.*?)\s*scripts\/start\.mjs$/.exec(script)![1]!.split(/\s+/);
  t.ok(
    flags.some((f) => f.startsWith('--max-semi-space-size')),
    `npm start passes V8 options: ${flags.join(' ')}`,
  );
  const opener = (dir: string) =>
    `const { openPglite } = await import(${JSON.stringify(new URL('../../src/storage/pglite.ts', import.meta.url).href)});
     const db = await openPglite(${JSON.stringify(dir)}, ${JSON.stringify(template)});
     process.stdout.write(JSON.stringify(await db.query('SELECT 1 AS one')));
     await db.close();`;
  for (const [name, loader] of [
    ['without a loader (Node strips the types)', []],
    ['with tsx', ['--import=tsx']],
  ] as const) {
    const file = join(root, `start-flags-${loader.length}.mjs`);
    writeFileSync(file, opener(join(root, `start-flags-${loader.length}`)));
    const run = spawnSync(process.execPath, [...flags, ...loader, file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(run.stdout, '[{"one":1}]', `${name}: ${run.stderr.slice(-300)}`);
  }
});
