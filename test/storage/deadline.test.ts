// A statement past its request's deadline (storage/deadline.ts) on PostgreSQL: the caller gets
// `database_unavailable` at the deadline, and the statement itself is cancelled on the server, even
// one whose text is longer than the server shows (pg_stat_activity keeps 1 KB of it); work outside
// any deadline is not bounded by one.

import postgres from 'postgres';
import { eachBackend } from '../support/backends.ts';
import { unbounded, withDeadline } from '../../src/storage/deadline.ts';
import { StorageError } from '../../src/storage/errors.ts';

eachBackend(
  'a statement waiting on a lock past its deadline',
  async (t, fx) => {
    const db = await fx.open();
    await db.query('create table deadline_check (id int primary key, v int)');
    await db.query('insert into deadline_check values (1, 0)');
    const holder = postgres(fx.options.databaseUrl!, { max: 1, onnotice: () => {} });
    t.teardown(() => holder.end({ timeout: 1 }));
    const held = await holder.reserve();
    await held`begin`;
    await held`update deadline_check set v = v + 1 where id = 1`;

    const text = `update deadline_check set v = v + 1 where id = 1 /* ${'x'.repeat(2000)} */`;
    const started = performance.now();
    const error = await withDeadline(0.5, () => db.query(text)).then(
      () => undefined,
      (e: unknown) => e,
    );
    const ms = performance.now() - started;
    t.ok(error instanceof StorageError && error.code === 'database_unavailable', `database_unavailable (${(error as Error)?.message})`);
    t.ok(ms >= 450 && ms < 1_500, `at the deadline (${Math.round(ms)} ms)`);
    let waiting = 1;
    for (let k = 0; k < 20 && waiting > 0; k++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      [{ waiting }] = await held<
        { waiting: number }[]
      >`select count(*)::int as waiting from pg_stat_activity where state = 'active' and wait_event_type = 'Lock' and query like 'update deadline_check%'`;
    }
    t.equal(waiting, 0, 'the statement was cancelled on the server');

    // Outside any request the same wait is not cut at half a second.
    const background = unbounded(() => db.query('update deadline_check set v = v + 1 where id = 1'));
    await new Promise((resolve) => setTimeout(resolve, 800));
    await held`rollback`;
    held.release();
    await background;
    t.pass('work outside a deadline waited for the lock and went through');
  },
  { kind: 'postgres', because: 'the embedded database runs one statement at a time inside the process: nothing to cancel' },
);
