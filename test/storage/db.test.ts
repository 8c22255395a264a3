// The database interface behaves the same on PGlite and PostgreSQL: the same JS values come back
// for the same SQL, transactions commit or leave nothing, concurrent callers never see or undo each
// other's transaction, errors are StorageErrors with stable codes, and an unreachable server is
// reported as `database_unavailable` without the password in the message.

import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from '../../src/storage/errors.ts';
import { openDatabase } from '../../src/storage/open.ts';
import { eachBackend } from '../support/backends.ts';

eachBackend('values come back as the same JS types on both back ends', async (t, fx) => {
  const db = await fx.open();
  const [row] = await db.query(
    `SELECT 7::int2 AS i2, 70000::int4 AS i4, 9007199254740991::int8 AS i8, (SELECT count(*) FROM generate_series(1, 3)) AS n,
            1.25::float8 AS f8, 0.1::float8 + 0.2::float8 AS sum, 2.50::numeric AS num, true AS yes, NULL::text AS nothing,
            NULL::int8 AS no_int, 'é"\\'::text AS txt, '2024-05-06T07:08:09.123Z'::timestamptz AS at,
            '{"a": [1, 2.5, null], "b": {"c": "d"}}'::jsonb AS doc, ARRAY['x', 'y']::text[] AS arr,
            $1::jsonb AS obj_param, $2::jsonb AS text_param, $3::timestamptz AS date_param, $4::float8 AS num_param, $5::text AS null_param,
            $6::text AS undefined_param, $7::int8[] AS int8s`,
    [{ k: [1, 'two'] }, '{"already": "json"}', new Date('2020-01-02T03:04:05.678Z'), 1e-300, null, undefined, [1, 2]],
  );
  t.strictSame(row, {
    i2: 7,
    i4: 70000,
    i8: 9007199254740991,
    n: 3,
    f8: 1.25,
    sum: 0.1 + 0.2,
    num: '2.50',
    yes: true,
    nothing: null,
    no_int: null,
    txt: 'é"\\',
    at: new Date('2024-05-06T07:08:09.123Z'),
    doc: { a: [1, 2.5, null], b: { c: 'd' } },
    arr: ['x', 'y'],
    obj_param: { k: [1, 'two'] },
    text_param: { already: 'json' },
    date_param: new Date('2020-01-02T03:04:05.678Z'),
    num_param: 1e-300,
    null_param: null,
    undefined_param: null,
    int8s: [1, 2],
  });
  t.type(row!.i8, 'number');
  t.type(row!.n, 'number');
  t.ok(row!.at instanceof Date, 'timestamptz is a Date');
  t.strictSame(await db.query('SELECT 1 AS x WHERE false'), [], 'no rows is an empty array');
});

eachBackend('a transaction commits and returns its value', async (t, fx) => {
  const db = await fx.open();
  await db.query('CREATE TABLE notes (body text NOT NULL)');
  const value = await db.transaction(async (tx) => {
    await tx.query('INSERT INTO notes VALUES ($1), ($2)', ['a', 'b']);
    return (await tx.query<{ n: number }>('SELECT count(*) AS n FROM notes'))[0]!.n;
  });
  t.equal(value, 2);
  t.strictSame(await db.query('SELECT body FROM notes ORDER BY body'), [{ body: 'a' }, { body: 'b' }]);
});

eachBackend('a bulk write stores bytes, text and whole numbers as they were, or nothing when it fails', async (t, fx) => {
  const db = await fx.open();
  await db.query('CREATE TABLE bulk (name text NOT NULL, piece int4 PRIMARY KEY, bytes bytea)');
  const columns = [
    { name: 'name', type: 'text' },
    { name: 'piece', type: 'int4' },
    { name: 'bytes', type: 'bytea' },
  ] as const;
  // Several hundred KB a value (handed out in slices on PostgreSQL), every byte value, an empty one
  // and a missing one.
  const big = Buffer.alloc(700_001);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 8)) & 0xff;
  const rows = [
    ['première', 0, big],
    ['b', -2_147_483_648, new Uint8Array(0)],
    ['', 2_147_483_647, null],
    ['d', 3, big.subarray(1, 300_000)],
  ];
  await db.transaction((tx) => tx.copyIn('bulk', columns, rows));
  const back = await db.query<{ name: string; piece: number; bytes: Uint8Array | null }>('SELECT name, piece, bytes FROM bulk ORDER BY piece');
  t.same(
    back.map((r) => [r.name, r.piece, r.bytes === null ? null : Buffer.from(r.bytes).toString('base64')]),
    [...rows]
      .sort((a, b) => (a[1] as number) - (b[1] as number))
      .map(([n, p, b]) => [n, p, b === null ? null : Buffer.from(b as Uint8Array).toString('base64')]),
    'each row reads back as written',
  );
  // A row the table refuses (a piece already stored): the transaction leaves nothing.
  const failed = await db
    .transaction(async (tx) => {
      await tx.query("INSERT INTO bulk (name, piece) VALUES ('kept only if the transaction commits', 10)");
      await tx.copyIn('bulk', columns, [['again', 3, big]]);
    })
    .catch((e: unknown) => e);
  t.ok(failed instanceof StorageError && failed.code === 'query_failed', `refused as query_failed (${(failed as Error).message})`);
  t.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM bulk'))[0]!.n, 4, 'nothing of the failed transaction is stored');
});

eachBackend('a transaction that throws leaves nothing and rethrows the same error', async (t, fx) => {
  const db = await fx.open();
  await db.query('CREATE TABLE notes (body text NOT NULL)');
  const mine = new Error('changed my mind');
  await t.rejects(
    db.transaction(async (tx) => {
      await tx.query('INSERT INTO notes VALUES ($1)', ['lost']);
      await tx.query('CREATE TABLE also_lost (x int)');
      throw mine;
    }),
    mine,
  );
  t.strictSame(await db.query('SELECT * FROM notes'), []);
  t.strictSame(await db.query(`SELECT to_regclass('also_lost') AS t`), [{ t: null }], 'DDL rolled back too');
});

eachBackend('a failed statement inside a transaction rolls it back even if the error was caught', async (t, fx) => {
  const db = await fx.open();
  await db.query('CREATE TABLE notes (body text NOT NULL)');
  const err = await db
    .transaction(async (tx) => {
      await tx.query('INSERT INTO notes VALUES ($1)', ['before']);
      await tx.query('INSERT INTO notes VALUES (NULL)').catch(() => {});
      return 'done';
    })
    .catch((e: unknown) => e);
  t.ok(err instanceof StorageError, 'the transaction fails');
  t.equal((err as StorageError).code, 'query_failed');
  t.strictSame(await db.query('SELECT * FROM notes'), [], 'nothing was committed');
});

eachBackend('concurrent callers neither see nor undo a transaction in progress', async (t, fx) => {
  const db = await fx.open();
  await db.query('CREATE TABLE notes (body text NOT NULL)');
  let inside!: () => void;
  const started = new Promise<void>((resolve) => (inside = resolve));
  const doomed = db.transaction(async (tx) => {
    await tx.query('INSERT INTO notes VALUES ($1)', ['uncommitted']);
    inside();
    await sleep(100);
    throw new Error('roll back');
  });
  await started;
  // Issued while the transaction is open: must not run inside it (it would be rolled back with it).
  const outside = db.query('INSERT INTO notes VALUES ($1)', ['outside']);
  const seen = db.query<{ body: string }>('SELECT body FROM notes');
  const other = db.transaction(async (tx) => {
    await tx.query('INSERT INTO notes VALUES ($1)', ['other transaction']);
  });
  await t.rejects(doomed, { message: 'roll back' });
  await outside;
  await other;
  t.notOk(
    (await seen).some((r) => r.body === 'uncommitted'),
    'the open transaction was invisible',
  );
  t.strictSame(
    (await db.query<{ body: string }>('SELECT body FROM notes ORDER BY body')).map((r) => r.body),
    ['other transaction', 'outside'],
  );
});

eachBackend('using the database itself inside its own transaction fails at once', async (t, fx) => {
  const db = await fx.open();
  await t.rejects(
    db.transaction(async () => {
      await db.query('SELECT 1');
    }),
    { name: 'StorageError', code: 'query_failed', message: /transaction handle/ },
  );
  await t.rejects(
    db.transaction(async () => db.transaction(async () => 1)),
    { code: 'query_failed' },
  );
  // Work started inside a transaction but run after it ended is fine.
  let later: Promise<unknown> | undefined;
  await db.transaction(async () => {
    later = sleep(20).then(() => db.query('SELECT 1 AS one'));
  });
  t.strictSame(await later, [{ one: 1 }]);
});

eachBackend('a rejected statement is a StorageError query_failed with its SQLSTATE', async (t, fx) => {
  const db = await fx.open();
  await t.rejects(db.query('SELECT * FROM no_such_table'), { name: 'StorageError', code: 'query_failed', sqlState: '42P01' });
  await t.rejects(db.query('SELEC 1'), { code: 'query_failed', sqlState: '42601' });
  await t.rejects(db.query('SELECT 1; SELECT 2'), { code: 'query_failed' }, 'one statement per query on both back ends');
  await db.query('CREATE TABLE uniq (k text PRIMARY KEY)');
  await db.query('INSERT INTO uniq VALUES ($1)', ['a']);
  await t.rejects(db.query('INSERT INTO uniq VALUES ($1)', ['a']), { code: 'query_failed', sqlState: '23505' });
  t.strictSame(await db.query('SELECT 1 AS still_works'), [{ still_works: 1 }]);
});

eachBackend('ping answers true while open and false once closed; a closed database is unavailable', async (t, fx) => {
  const db = await fx.open();
  t.equal(await db.ping(), true);
  await db.close();
  t.equal(await db.ping(), false);
  await t.rejects(db.query('SELECT 1'), { name: 'StorageError', code: 'database_unavailable' });
  await db.close(); // closing twice is harmless
});

eachBackend('ping stays true while a long transaction holds the connection', async (t, fx) => {
  const db = await fx.open();
  const long = db.transaction(async (tx) => {
    await tx.query('SELECT pg_sleep(0.3)');
  });
  t.equal(await db.ping(), true);
  await long;
});

eachBackend(
  'a PGlite directory already open in this process is not opened twice',
  async (t, fx) => {
    const db = await fx.open();
    await t.rejects(openDatabase(fx.options), { name: 'StorageError', code: 'database_unavailable', message: /already open/ });
    await db.close();
    const again = await fx.open();
    t.strictSame(await again.query('SELECT 1 AS ok'), [{ ok: 1 }], 'reopens once closed');
  },
  { kind: 'pglite', because: 'PostgreSQL serves many connections' },
);

t.test('a PGlite directory that cannot be created is database_unavailable', async (t) => {
  const dir = t.testdir({ pglite: 'a file where the directory should be' });
  await t.rejects(openDatabase({ dataDir: dir }), { name: 'StorageError', code: 'database_unavailable' });
});

t.test('an unreachable PostgreSQL is database_unavailable and the message hides the password', async (t) => {
  const password = 's3cret-Pa55';
  const url = `postgres://fraud:${password}@127.0.0.1:1/fraud`;
  const err = await openDatabase({ databaseUrl: url, dataDir: '/nonexistent' }).catch((e: unknown) => e);
  t.ok(err instanceof StorageError);
  t.equal((err as StorageError).code, 'database_unavailable');
  t.match((err as StorageError).message, /127\.0\.0\.1:1/, 'says where it tried');
  t.notMatch((err as StorageError).message, password);
  t.notMatch((err as StorageError).message, url);
  t.notMatch(JSON.stringify(err), password, 'nor any property of the error');
});

t.test('a DATABASE_URL that is not a URL is database_unavailable and not echoed', async (t) => {
  const err = await openDatabase({ databaseUrl: 'not a url with hunter2', dataDir: '/nonexistent' }).catch((e: unknown) => e);
  t.ok(err instanceof StorageError);
  t.equal((err as StorageError).code, 'database_unavailable');
  t.notMatch((err as StorageError).message, 'hunter2');
});

eachBackend(
  'a wrong password for a real server is database_unavailable without the password',
  async (t, fx) => {
    const url = new URL(fx.options.databaseUrl!);
    url.password = 'definitely-wrong-Pa55';
    const err = await openDatabase({ databaseUrl: url.toString(), dataDir: fx.options.dataDir }).catch((e: unknown) => e);
    t.ok(err instanceof StorageError);
    t.equal((err as StorageError).code, 'database_unavailable');
    t.notMatch((err as StorageError).message, 'definitely-wrong-Pa55');
    t.equal((err as StorageError).sqlState, '28P01');
  },
  { kind: 'postgres', because: 'PGlite has no password' },
);
