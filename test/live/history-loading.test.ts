// An organization's first score waits for its history's load only until the score's deadline: a
// real server process on PostgreSQL, whose load of the organization is held back by a lock another
// session holds on the stored snapshots (the first table a load reads). The score is answered 503
// `history_loading` with Retry-After within the deadline and a second, nothing of it is stored, and
// the same request sent again once the load can go on is scored and recorded as a new one.

import t from 'tap';
import postgres from 'postgres';
import { freshDatabase } from '../support/server.ts';
import { SignIn, spawnServer, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';
import { holdLock, type HeldLock } from '../support/held-lock.ts';

const DEADLINE_S = 1;

t.test('a first score while the history cannot load yet', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(process.env.TEST_DATABASE_URL!);
  const signIn = await SignIn.start();
  const lock = postgres(db.url, { max: 1, onnotice: () => {} });
  let server: ServerProcess | undefined;
  let held: HeldLock | undefined;
  t.teardown(async () => {
    await held?.release();
    await lock.end({ timeout: 5 });
    await server?.stop('SIGKILL');
    await signIn.close();
    await db.drop();
  });
  server = await spawnServer({ ...signIn.env, DATABASE_URL: db.url, SCORE_DEADLINE_SECONDS: String(DEADLINE_S) });
  const org = await signIn.organization(server.base, 'loading');
  const body = { transaction_id: 'first', amount: 42, customer_id: 'c-1', merchant_id: 'm-1' };

  held = await holdLock(lock, 'history_snapshots');

  const sent = performance.now();
  const refused = await withKey(server.base, org.secret, '/api/v1/risk/score', body);
  const ms = performance.now() - sent;
  t.equal(refused.status, 503, `503 while the history cannot load (${refused.text.slice(0, 200)})`);
  t.equal(refused.json.detail.reason, 'history_loading', 'reason history_loading');
  t.equal(refused.json.detail.retry_after_seconds, 2, 'says when to send it again');
  t.match(refused.json.detail.fix, /again/, 'and that the same request may be sent again');
  t.ok(ms < (DEADLINE_S + 1) * 1000, `answered within the deadline and a second (${Math.round(ms)} ms)`);
  const stored = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    const [{ n }] = await stored<{ n: number }[]>`SELECT count(*)::int AS n FROM transactions WHERE organization_id = ${org.id}`;
    t.equal(n, 0, 'nothing of it is stored');
  } finally {
    await stored.end();
  }

  await held.release();
  let again = await withKey(server.base, org.secret, '/api/v1/risk/score', body);
  // The load that went on in the background may still be finishing: a client honours Retry-After.
  for (let tries = 0; again.status === 503 && again.json?.detail?.reason === 'history_loading' && tries < 10; tries++) {
    await new Promise((resolve) => setTimeout(resolve, again.json.detail.retry_after_seconds * 1000));
    again = await withKey(server.base, org.secret, '/api/v1/risk/score', body);
  }
  t.equal(again.status, 200, `sent again once the history can load: scored (${again.text.slice(0, 200)})`);
  t.equal(again.replayed, false, 'as a new transaction, not a replay of one stored');
  t.equal((await withKey(server.base, org.secret, '/api/v1/risk/score', { ...body, transaction_id: 'second' })).status, 200, 'and the next at once');
});
