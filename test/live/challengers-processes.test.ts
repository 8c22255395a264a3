// Promotion and rollback across real server processes (`src/main.ts`) on one PostgreSQL server: a
// challenger added through one process scores in shadow on the other; a promotion made through one
// decides on the other within a second (keys carry their organization's models), and so does the
// rollback made through the second; the audit holds each, with who.

import t from 'tap';
import postgres from 'postgres';
import { freshDatabase } from '../support/server.ts';
import { SignIn, spawnServer, withKey, type ServerProcess } from '../support/processes.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { mergeSettings } from '../../src/model/custom.ts';
import { needs, TEST_DATABASE_URL } from '../support/components.ts';

const url = TEST_DATABASE_URL!;
t.test('promotion and rollback across two processes', { skip: needs('postgres') }, async (t) => {
  const base = loadModelFolder('models/builtin');
  if (isProblem(base)) throw new Error(base.message);
  const db = await freshDatabase(url);
  const signIn = await SignIn.start();
  const servers: ServerProcess[] = [];
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    for (const s of servers) await s.stop('SIGKILL');
    await sql.end();
    await signIn.close();
    await db.drop();
  });
  const env = { ...signIn.env, DATABASE_URL: db.url };
  const a = await spawnServer(env);
  servers.push(a);
  const b = await spawnServer(env);
  servers.push(b);
  const org = await signIn.organization(a.base, 'Twin');
  const settings = mergeSettings(base.file, { thresholds: { balanced: { review: 0.000_001, block: 0.000_002 } } });
  await sql`INSERT INTO custom_models (id, organization_id, name, base_model_id, settings) VALUES ('cm_strict', ${org.id}, 'strict', ${base.file.id}, ${sql.json(settings)})`;
  const act = async (server: ServerProcess, path: string, method = 'POST') => {
    // No body: no content type (an empty JSON body is refused).
    const { 'content-type': _, ...headers } = org.member;
    const res = await fetch(`${server.base}${path}`, { method, headers });
    return { status: res.status, json: (await res.json()) as any };
  };
  const pay = (server: ServerProcess, id: string) =>
    withKey(server.base, org.secret, '/api/v1/risk/score', {
      amount: 42.5,
      customer_id: 'C1',
      merchant_id: 'M1',
      location: 'Lisbon',
      payment_type: 'card_present',
      transaction_id: id,
    });
  const settle = () => new Promise((r) => setTimeout(r, 1_200));

  t.equal((await act(a, '/api/models/cm_strict/challenger')).status, 200, 'a challenger, through A');
  await settle();
  const shadowed = await pay(b, 'tx-1');
  t.equal(shadowed.json.model_id, base.file.id, 'B answers with the built-in model');
  const [row] = await sql<{ challengers: { model_id: string; decision: string }[] }[]>`SELECT challengers FROM transactions WHERE transaction_id = 'tx-1'`;
  t.same(
    row!.challengers.map((c) => [c.model_id, c.decision]),
    [['cm_strict', 'block']],
    'and records the challenger A added',
  );

  t.equal((await act(a, '/api/models/cm_strict/activate')).json.active, true, 'promoted through A');
  await settle();
  const promoted = await pay(b, 'tx-2');
  t.same([promoted.json.model_id, promoted.json.decision], ['cm_strict', 'block'], 'B decides with it');
  t.same((await act(b, `/api/organizations/${org.id}/models/rollback`)).json, { model_id: null, previous_model_id: 'cm_strict' }, 'rolled back through B');
  await settle();
  t.equal((await pay(a, 'tx-3')).json.model_id, base.file.id, 'A decides with the built-in model again');
  const audit = (await act(a, `/api/organizations/${org.id}/models/audit`, 'GET')).json.data as { action: string }[];
  t.same(
    audit.map((e) => e.action),
    ['rolled_back', 'promoted', 'challenger_added'],
  );
});
