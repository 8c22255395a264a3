// Round-robin assignment across two server processes (`src/main.ts`) on one PostgreSQL: an inbox
// made through one process assigns the cases both open, and when many payments open cases through
// both at once no analyst ends above the inbox's cap: each holds exactly the cap, the rest wait
// unassigned. The inbox's row lock, taken in each group commit that opens a case in it, is what
// makes the second process count what the first assigned.

import t from 'tap';
import postgres from 'postgres';
import { freshDatabase } from '../support/server.ts';
import { serverPair, SignIn, withKey, type ServerProcess } from '../support/processes.ts';
import { needs, TEST_DATABASE_URL } from '../support/components.ts';

const CAP = 20;

t.test('auto-assignment across two processes keeps every analyst at or below the cap', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(TEST_DATABASE_URL!);
  const signIn = await SignIn.start();
  const servers: ServerProcess[] = [];
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  t.teardown(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await sql.end();
    await signIn.close();
    await db.drop();
  });
  const { a, b, org } = await serverPair({ ...signIn.env, DATABASE_URL: db.url }, servers, signIn, 'twin');
  const analysts = ['ana', 'bo', 'cy'];
  for (const id of analysts) {
    await sql`INSERT INTO users (id, email) VALUES (${id}, ${`${id}@example.com`})`;
    await sql`INSERT INTO memberships (organization_id, user_id, role) VALUES (${org.id}, ${id}, 'analyst')`;
  }
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${a.base}/api/organizations/${org.id}${path}`, { method: 'POST', headers: org.member, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  };
  let n = 0;
  const pay = (s: ServerProcess, customer: string) =>
    withKey(s.base, org.secret, '/api/v1/risk/score', { transaction_id: `p-${++n}`, amount: 40, customer_id: customer, merchant_id: 'm-1' });
  // B holds the organization before the rule and the inbox exist: it learns of them by the feed.
  t.equal((await pay(b, 'warm')).status, 200);
  t.equal((await post('/rules', { name: 'Review all', expression: 'amount > 0.0', action: 'review', status: 'active' })).status, 201);
  const inbox = await post('/inboxes', { name: 'Rotating', members: analysts, auto_assign: { cap: CAP } });
  t.equal(inbox.status, 201);
  t.match(inbox.json, { auto_assign: { cap: CAP } });
  // Until B routes with the inbox: a payment there opens a case (each try a customer of its own).
  const opened = async () => Number((await sql`SELECT count(*)::int AS n FROM cases WHERE organization_id = ${org.id}`)[0]!.n);
  for (let tries = 0; ; tries++) {
    const before = await opened();
    t.equal((await pay(b, `probe-${tries}`)).status, 200);
    if ((await opened()) > before) break;
    if (tries > 100) throw new Error('process B never routed to the new inbox');
    await new Promise((r) => setTimeout(r, 50));
  }

  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => pay(i % 2 ? a : b, `c-${i}`)));
  t.ok(
    answers.every((r) => r.status === 200 && r.json.decision === 'review'),
    'every payment answered review',
  );
  const load = await sql<{ assignee: string | null; n: number }[]>`
    SELECT assignee, count(*)::int AS n FROM cases WHERE organization_id = ${org.id} AND status IN ('open', 'in_progress') GROUP BY assignee ORDER BY assignee`;
  const total = await opened();
  t.same(
    load.map((l) => [l.assignee, l.n]),
    [...analysts.map((id) => [id, CAP]), [null, total - CAP * analysts.length]],
    'each analyst holds exactly the cap; the rest wait unassigned',
  );
  const timelines = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM case_timeline WHERE organization_id = ${org.id} AND kind = 'assigned' AND actor = 'system'`;
  t.equal(timelines[0]!.n, CAP * analysts.length, 'each assignment told once on its timeline');
});
