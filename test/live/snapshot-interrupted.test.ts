// A history snapshot whose write is interrupted by the process's end leaves nothing half-stored: a
// real server process on PostgreSQL loads a 60,000-transaction organization from its rows (its first
// score) and begins to store the snapshot of it, which a lock another session holds on the pieces'
// table keeps from finishing; the process is then killed. Once the lock is released, no snapshot row
// and no piece is stored; a new process loads the organization from its rows, answers as the rows
// say, and stores a whole snapshot (every piece it names).

import t from 'tap';
import postgres from 'postgres';
import { freshDatabase } from '../support/server.ts';
import { SignIn, spawnServer, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';
import { holdLock, type HeldLock } from '../support/held-lock.ts';

const HELD = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a snapshot write cut by the end of its process', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(process.env.TEST_DATABASE_URL!);
  const signIn = await SignIn.start();
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  const servers: ServerProcess[] = [];
  let held: HeldLock | undefined;
  t.teardown(async () => {
    await held?.release();
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await sql.end({ timeout: 5 });
    await signIn.close();
    await db.drop();
  });
  const env = { ...signIn.env, DATABASE_URL: db.url };
  const a = await spawnServer(env);
  servers.push(a);
  const org = await signIn.organization(a.base, 'interrupted');
  const now = Date.now();
  await sql`
    INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
    SELECT ${org.id}, 'held-' || x, ${now - 60_000}::float8 - (${HELD} - x) * 28000.0, 10 + x % 90, 'c' || (x % 600), 'm' || (x % 40), 'Lisbon', 'wallet', 'import'
    FROM generate_series(1, ${HELD}) AS x`;

  held = await holdLock(sql, 'history_snapshot_pieces');

  const score = async (s: ServerProcess, id: string) => {
    let r = await withKey(s.base, org.secret, '/api/v1/risk/score', { transaction_id: id, amount: 33, customer_id: 'c7', merchant_id: 'm7' });
    for (let tries = 0; r.status === 503 && tries < 30; tries++) {
      await sleep(2_000);
      r = await withKey(s.base, org.secret, '/api/v1/risk/score', { transaction_id: id, amount: 33, customer_id: 'c7', merchant_id: 'm7' });
    }
    return r;
  };
  const first = await score(a, 'first');
  t.equal(first.status, 200, 'the first score is answered (its load from the rows)');

  // The snapshot's write waits for the lock: a backend of the server's stands in a lock wait.
  let waiting = 0;
  for (let tries = 0; tries < 100 && waiting === 0; tries++, await sleep(100)) {
    [{ waiting }] = await sql<
      { waiting: number }[]
    >`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`;
  }
  t.equal(waiting, 1, 'the snapshot write has begun and waits');
  await a.stop('SIGKILL');
  await held.release();
  // The killed process's backend goes on once the lock is released, finds its client gone and
  // rolls back.
  let left = 1;
  for (let tries = 0; tries < 100 && left > 0; tries++, await sleep(100)) {
    [{ left }] = await sql<
      { left: number }[]
    >`SELECT count(*)::int AS left FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`;
  }
  const [stored] = await sql<{ snapshots: number; pieces: number }[]>`
    SELECT (SELECT count(*)::int FROM history_snapshots) AS snapshots, (SELECT count(*)::int FROM history_snapshot_pieces) AS pieces`;
  t.same(stored, { snapshots: 0, pieces: 0 }, 'nothing of the cut write is stored');

  const b = await spawnServer(env);
  servers.push(b);
  const again = await score(b, 'second');
  t.equal(again.status, 200, 'a new process loads the organization from its rows');
  t.equal(again.json.entity_history.c7.prior_transactions, HELD / 600 + 1, "and counts the customer's stored payments (and the first score)");
  let whole: { pieces: number; stored: number } | undefined;
  for (let tries = 0; tries < 100 && !whole; tries++, await sleep(100)) {
    [whole] = await sql<{ pieces: number; stored: number }[]>`
      SELECT s.pieces, (SELECT count(*)::int FROM history_snapshot_pieces p WHERE p.organization_id = s.organization_id AND p.generation = s.generation) AS stored
      FROM history_snapshots s WHERE s.organization_id = ${org.id}`;
  }
  t.ok(whole && whole.pieces >= 1 && whole.stored === whole.pieces, `and stores a whole snapshot (${JSON.stringify(whole)})`);
});
