// On PostgreSQL every statement has a time limit (DATABASE_STATEMENT_TIMEOUT_SECONDS): a statement
// held up past it (here by a lock another session holds on the transactions) is cancelled by the
// server, and the request that needed it is answered 503 `database_timeout` with Retry-After and a
// fix, in about the limit, never a hang or a 500; once the lock is gone the same request succeeds.
// The embedded database has no such limit (it runs one statement at a time in this process).

import t from 'tap';
import postgres from 'postgres';
import { needs, TEST_DATABASE_URL } from '../support/components.ts';
import { liveFor } from '../support/accounts.ts';
import { openDatabase } from '../../src/storage/open.ts';
import { StorageError } from '../../src/storage/errors.ts';
import { unbounded } from '../../src/storage/deadline.ts';
import { tempDir } from '../support/temp.ts';
import { freshDatabase } from '../support/server.ts';

const skip = needs('postgres');

t.test('a statement past the limit fails with query_timeout', { skip }, async (t) => {
  const fresh = await freshDatabase(TEST_DATABASE_URL!);
  const db = await openDatabase({ databaseUrl: fresh.url, dataDir: tempDir('timeout-'), statementTimeoutSeconds: 0.3 });
  t.teardown(async () => {
    await db.close();
    await fresh.drop();
  });
  const began = performance.now();
  const err = await db.query('SELECT pg_sleep(5)').catch((e: unknown) => e);
  t.ok(err instanceof StorageError, 'a StorageError');
  t.equal((err as StorageError).code, 'query_timeout');
  t.equal((err as StorageError).sqlState, '57014');
  t.ok(performance.now() - began < 3000, 'cancelled at the limit, not after the statement');
  t.same(await db.query<{ one: number }>('SELECT 1 AS one'), [{ one: 1 }], 'the connection is usable afterwards');
});

t.test('work outside a request may take many statements, for longer than any one may', { skip }, async (t) => {
  // A history's load is one transaction of many statements; each is bounded by the limit (plus a
  // grace of 5 s outside a request), the transaction as a whole is not: a load of millions of rows
  // takes longer than that, and was failed as "database unavailable" at 65 s.
  const fresh = await freshDatabase(TEST_DATABASE_URL!);
  const db = await openDatabase({ databaseUrl: fresh.url, dataDir: tempDir('timeout-'), statementTimeoutSeconds: 0.4 });
  t.teardown(async () => {
    await db.close();
    await fresh.drop();
  });
  const began = performance.now();
  const slept = await unbounded(() =>
    db.transaction(async (tx) => {
      let n = 0;
      while (performance.now() - began < 6_500) {
        await tx.query('SELECT pg_sleep(0.25)');
        n++;
      }
      return n;
    }),
  );
  t.ok(
    slept >= 20 && performance.now() - began > 6_000,
    `${slept} statements over ${Math.round(performance.now() - began)} ms, past the 5.4 s a single one may take, committed`,
  );
  const err = await unbounded(() => db.transaction((tx) => tx.query('SELECT pg_sleep(2)'))).catch((e: unknown) => e);
  t.equal((err as StorageError).code, 'query_timeout', 'while each statement in it is still held to the limit');
});

t.test('a score held up by a lock is answered 503 database_timeout, then succeeds', { skip }, async (t) => {
  const { live } = await liveFor(t, { name: 'postgres', databaseUrl: TEST_DATABASE_URL! }, { DATABASE_STATEMENT_TIMEOUT_SECONDS: 0.5 });
  const org = await live.organization('Locked');
  const url = live.s.config.DATABASE_URL!;
  // Another session takes the transactions table and keeps it until released.
  const other = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => other.end({ timeout: 5 }));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = other.begin(async (sql) => {
    await sql.unsafe('LOCK TABLE transactions IN ACCESS EXCLUSIVE MODE');
    locked();
    await released;
  });
  await isLocked;

  const began = performance.now();
  const body = { transaction_id: 'held-1', amount: 12.5, customer_id: 'c1', merchant_id: 'm1' };
  const answer = await live.score(org, body);
  const ms = performance.now() - began;
  t.equal(answer.statusCode, 503);
  t.equal(answer.json().detail.reason, 'database_timeout');
  t.match(answer.json().detail.fix, /DATABASE_STATEMENT_TIMEOUT_SECONDS/);
  t.ok(answer.headers['retry-after'], 'Retry-After');
  t.ok(ms < 5000, `answered in ${Math.round(ms)} ms`);

  release();
  await holding;
  const again = await live.score(org, body);
  t.equal(again.statusCode, 200, 'once the lock is gone the same request succeeds');
});
