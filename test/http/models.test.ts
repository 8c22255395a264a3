// Custom models end to end, on both storage back ends: made with the real command line
// (`tools/model-create.ts` in a child process), listed to their organization only, activated and
// deactivated by owners, and used by the organization's API keys on `/api/v1/risk/score` (the
// dashboard route keeps the built-in model). On the embedded database the command line is refused
// while the server holds it, and the server's sessions and keys survive the restart around it.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backends, freshDatabase, start, tempDir, type Running } from '../support/server.ts';
import { IdentityProvider, makeKey, signWith } from '../support/idp.ts';

const score = { amount: 42.5, customer_id: 'C000001', merchant_id: 'M00001', location: 'Lisbon', payment_type: 'card_present' };

function cli(env: Record<string, string>, args: string[]) {
  const r = spawnSync(process.execPath, ['tools/model-create.ts', ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('the command line refuses inconsistent settings', async (t) => {
  const file = join(tempDir('settings-'), 's.json');
  writeFileSync(file, JSON.stringify({ thresholds: { balanced: { review: 0.9, block: 0.2 } } }));
  const r = cli({ DATA_DIR: tempDir('cli-'), DATABASE_URL: '' }, ['--organization', 'org_x', '--name', 'x', '--settings', file]);
  t.equal(r.status, 2);
  t.match(r.stderr, /review must not be above block/);
  writeFileSync(file, JSON.stringify({ stack: { weights: { nonsense: 1 } } }));
  t.match(
    cli({ DATA_DIR: tempDir('cli-'), DATABASE_URL: '' }, ['--organization', 'org_x', '--name', 'x', '--settings', file]).stderr,
    /settings: stack\.weights/,
  );
});

for (const backend of backends()) {
  t.test(`custom models on ${backend.name}`, async (t) => {
    const idp = await new IdentityProvider().start();
    t.teardown(() => idp.close());
    const key = await makeKey('ES256', 'k1');
    idp.published = [key];
    const dataDir = tempDir('models-');
    const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
    const overrides = { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'y'.repeat(48), authConfigured: true };
    let s: Running = await start({ dataDir, ...(db ? { databaseUrl: db.url } : {}), overrides });
    t.teardown(async () => {
      await s.close();
      await db?.drop();
    });
    const env = { DATA_DIR: dataDir, DATABASE_URL: db?.url ?? '' };

    const signIn = async (sub: string) => {
      const res = await s.app.inject({ method: 'POST', url: '/api/auth/session', payload: { access_token: await signWith(key, idp.issuer, { sub }) } });
      const c = Object.fromEntries(res.cookies.map((x) => [x.name, x.value]));
      return { cookie: `service_session=${c.service_session}; service_csrf=${c.service_csrf}`, 'x-csrf-token': c.service_csrf! };
    };
    const ana = await signIn('user-ana');
    const bo = await signIn('user-bo');
    const acme = (await s.app.inject({ method: 'POST', url: '/api/organizations', headers: ana, payload: { name: 'Acme' } })).json();
    const boOrg = (await s.app.inject({ method: 'POST', url: '/api/organizations', headers: bo, payload: { name: 'Bo Ltd' } })).json();
    const secret = (await s.app.inject({ method: 'POST', url: `/api/organizations/${acme.id}/api-keys`, headers: ana, payload: { name: 'k' } })).json()
      .secret as string;
    const builtIn = (await s.app.inject('/api/models')).json().models[0].id as string;

    const settingsFile = join(tempDir('settings-'), 'strict.json');
    writeFileSync(settingsFile, JSON.stringify({ thresholds: { balanced: { review: 0.01, block: 0.02 } }, stack: { weights: { graph: 2 } } }));
    const args = ['--organization', acme.id, '--name', 'Acme strict', '--settings', settingsFile];
    if (!db) {
      const refused = cli(env, args);
      t.equal(refused.status, 2, 'the command line is refused while the server holds the embedded database');
      t.match(refused.stderr, /in use by process/);
      await s.close();
    }
    const made = cli(env, args);
    t.equal(made.status, 0, made.stderr);
    const model = JSON.parse(made.stdout.trim().split('\n').pop()!);
    t.same(
      {
        org: model.organization_id,
        base: model.base_model_id,
        active: model.active,
        review: model.settings.thresholds.balanced.review,
        graph: model.settings.stack.weights.graph,
      },
      { org: acme.id, base: builtIn, active: false, review: 0.01, graph: 2 },
      'made from the built-in model with the given settings',
    );
    if (!db) t.equal(cli(env, ['--organization', 'org_missing', '--name', 'x']).status, 2, 'an unknown organization is refused');
    const other = JSON.parse(cli(env, ['--organization', boOrg.id, '--name', 'Bo model']).stdout.trim());
    if (!db) s = await start({ dataDir, overrides });
    const app = s.app;
    t.equal((await app.inject({ url: '/api/auth/me', headers: ana })).json().authenticated, true, 'sessions survive the restart');

    const listed = (await app.inject({ url: '/api/models', headers: ana })).json().models.map((m: { id: string }) => m.id);
    t.same(listed, [builtIn, model.id], "my organization's model is listed to me");
    t.same(
      (await app.inject('/api/models')).json().models.map((m: { id: string }) => m.id),
      [builtIn],
      'a guest sees the built-in model only',
    );
    t.equal((await app.inject({ url: `/api/models/${model.id}`, headers: ana })).json().thresholds.balanced.review, 0.01);
    t.equal((await app.inject({ url: `/api/models/${model.id}`, headers: bo })).statusCode, 404, "another organization's model is 404");
    t.equal((await app.inject({ url: `/api/models/${model.id}` })).statusCode, 404, 'and 404 to a guest');
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/models/${other.id}/activate`, headers: ana })).statusCode,
      404,
      "activating another organization's model is 404",
    );
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/models/${builtIn}/activate`, headers: ana })).statusCode,
      400,
      'the built-in model is not activated',
    );

    const v1 = async () =>
      (await app.inject({ method: 'POST', url: '/api/v1/risk/score', headers: { authorization: `Bearer ${secret}` }, payload: score })).json();
    t.equal((await v1()).model_id, builtIn, 'before activation, keys score with the built-in model');
    const activated = await app.inject({ method: 'POST', url: `/api/models/${model.id}/activate`, headers: ana });
    t.equal(activated.statusCode, 200);
    t.equal(activated.json().active, true);
    const custom = await v1();
    t.same(
      { id: custom.model_id, review: custom.review_threshold, block: custom.block_threshold },
      { id: model.id, review: 0.01, block: 0.02 },
      "after activation, the organization's keys score with it",
    );
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/risk/score', payload: score })).json().model_id,
      builtIn,
      'the dashboard route keeps the built-in model',
    );

    await app.inject({ method: 'POST', url: '/api/organizations', headers: ana, payload: { name: 'unused' } });
    await s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, 'user-bo', 'analyst')`, [acme.id]);
    const byMember = await app.inject({ method: 'POST', url: `/api/models/${model.id}/deactivate`, headers: bo });
    t.equal(byMember.statusCode, 403, 'a member who is not an owner cannot deactivate it');
    t.equal((await app.inject({ method: 'POST', url: `/api/models/${model.id}/deactivate`, headers: ana })).json().active, false, 'deactivated');
    t.equal((await v1()).model_id, builtIn, 'the built-in model scores again');
  });
}
