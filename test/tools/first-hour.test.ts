// A new user's way to a recorded score without an outside identity provider, over real HTTP with
// real processes, as the README tells it:
// - `npm run org:create` on a stopped server's DATA_DIR prints an organization and a key, and the
//   server started next on that DATA_DIR, with no identity provider configured, scores with it and
//   records the score; the same on PostgreSQL, where SESSION_SECRET is required and must match;
// - `npm run dev:idp` refuses a non-loopback address and signs only for loopback names (its public
//   key set answers any); with --container (compose.yaml's profile) it listens on every interface
//   and names the public address as issuer; a server pointed at it signs in with its token
//   (verified as any provider's), makes an organization and a key, and scores;
// - an organization made for an owner's e-mail becomes theirs at their first sign-in.

import t from 'tap';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { decodeJwt } from 'jose';
import { promisify } from 'node:util';
import { spawnDevIdp, spawnServer, getWithKey, withKey, type ServerProcess } from '../support/processes.ts';
import { backends, freshDatabase } from '../support/server.ts';
import { tempDir } from '../support/temp.ts';
import { needs } from '../support/components.ts';

const run = promisify(execFile);

/** How `npm run dev:idp` with `args` exits when it refuses them: its code and what it wrote. */
function devIdpExit(args: readonly string[]): Promise<{ code: number; err: string }> {
  return run(process.execPath, ['tools/dev-idp.ts', '--port', '0', ...args], { env: { ...process.env, DATA_DIR: tempDir('idp-') } }).then(
    () => ({ code: 0, err: '' }),
    (e: { code: number; stderr: string }) => ({ code: e.code, err: e.stderr }),
  );
}

/** The status of a request addressed to `host` (node:http, since fetch does not let a caller name
 *  another Host). */
function statusAddressedTo(url: string, host: string, method = 'GET'): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = request(url, { method, headers: { host, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject).end(method === 'POST' ? '{"email":"a@example.com"}' : undefined);
  });
}
const pg = backends().find((b) => b.name === 'postgres');

async function orgCreate(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await run(process.execPath, ['tools/org-create.ts', ...args], { env: { ...process.env, ...env } });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

const payment = (id: string) => ({
  transaction_id: id,
  amount: 42.5,
  customer_id: 'c-1',
  merchant_id: 'm-1',
  location: 'Lisbon',
  payment_type: 'card_not_present',
});

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function scoresAndRecords(t: Test, server: ServerProcess, key: string, id: string): Promise<void> {
  const scored = await withKey(server.base, key, '/api/v1/risk/score', payment(id));
  t.equal(scored.status, 200, `the key scores: ${scored.text.slice(0, 200)}`);
  t.ok(scored.json.risk_score >= 0 && scored.json.risk_score <= 1, 'a calibrated probability');
  const stored = await getWithKey(server.base, key, `/api/v1/transactions/${id}`);
  t.equal(stored.status, 200, 'the score is recorded');
  t.equal(stored.json.transaction_id ?? stored.json.transaction?.transaction_id, id);
}

t.test('org:create on a stopped server’s embedded database, then a key scores with no identity provider', async (t) => {
  const dataDir = tempDir('first-hour-');
  const made = await orgCreate({ DATA_DIR: dataDir, SESSION_SECRET: '' }, '--name', 'My shop');
  t.equal(made.code, 0, made.err);
  const printed = JSON.parse(made.out) as { organization_id: string; api_key: string; stage: string; owner: unknown };
  t.match(printed, { organization_id: /^org_/, api_key: /^sk_test_/, stage: 'test', owner: null }, 'one JSON object with the id and the key');
  t.equal(made.out.trim().split('\n').length, 1, 'one line');

  const server = await spawnServer({ DATA_DIR: dataDir, AUTHPROVIDER_URL: '', SESSION_SECRET: '' });
  t.teardown(() => server.stop('SIGKILL'));
  const health = await (await fetch(`${server.base}/api/health`)).json();
  t.equal(health.auth_configured, false, 'no sign-in configured');
  await scoresAndRecords(t, server, printed.api_key, 'first-1');
  const refused = await withKey(server.base, `sk_test_${'x'.repeat(43)}`, '/api/v1/risk/score', payment('first-2'));
  t.equal(refused.status, 401, 'an unknown key is still refused');
  t.equal(refused.json.detail.reason, 'invalid_api_key');
  const organizations = await fetch(`${server.base}/api/organizations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"x"}',
  });
  t.equal(organizations.status, 503, 'account routes still need sign-in');
  t.equal((await organizations.json()).detail.reason, 'auth_not_configured');

  const busy = await orgCreate({ DATA_DIR: dataDir, SESSION_SECRET: '' }, '--name', 'Second');
  t.not(busy.code, 0, 'refused while the server holds the embedded database');
  t.match(busy.err, /stop it first|Stop it first|in use|lock/i, 'and says why');
});

t.test('org:create on PostgreSQL needs SESSION_SECRET, and the servers sharing it accept the key', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(pg!.databaseUrl!);
  t.teardown(() => db.drop());
  const secret = 'first-hour-session-secret-0123456789abcdef';
  const missing = await orgCreate({ DATABASE_URL: db.url, SESSION_SECRET: '' }, '--name', 'Shop');
  t.equal(missing.code, 2, 'refused without SESSION_SECRET');
  t.match(missing.err, /SESSION_SECRET/);
  t.equal(missing.out, '', 'nothing printed');

  const made = await orgCreate({ DATABASE_URL: db.url, SESSION_SECRET: secret }, '--name', 'Shop', '--stage', 'live');
  t.equal(made.code, 0, made.err);
  const printed = JSON.parse(made.out) as { api_key: string; stage: string };
  t.match(printed, { api_key: /^sk_live_/, stage: 'live' });

  const server = await spawnServer({ DATABASE_URL: db.url, SESSION_SECRET: secret, AUTHPROVIDER_URL: '' });
  t.teardown(() => server.stop('SIGKILL'));
  await scoresAndRecords(t, server, printed.api_key, 'pg-1');

  const other = await spawnServer({ DATABASE_URL: db.url, SESSION_SECRET: 'another-secret-0123456789abcdef0123456789', AUTHPROVIDER_URL: '' });
  t.teardown(() => other.stop('SIGKILL'));
  t.equal(
    (await withKey(other.base, printed.api_key, '/api/v1/risk/score', payment('pg-2'))).status,
    401,
    'a server with another SESSION_SECRET does not accept it',
  );
  const none = await spawnServer({ DATABASE_URL: db.url, SESSION_SECRET: '', AUTHPROVIDER_URL: '' });
  t.teardown(() => none.stop('SIGKILL'));
  const unconfigured = await withKey(none.base, printed.api_key, '/api/v1/risk/score', payment('pg-3'));
  t.equal(unconfigured.status, 503, 'without SESSION_SECRET on PostgreSQL keys cannot be checked');
  t.match(unconfigured.json.detail, { reason: 'auth_not_configured', fix: /SESSION_SECRET/ });
});

t.test('dev:idp listens on loopback only', async (t) => {
  for (const host of ['0.0.0.0', '192.168.1.10', 'example.com']) {
    const refused = await devIdpExit(['--host', host]);
    t.equal(refused.code, 2, `--host ${host} is refused`);
    t.match(refused.err, /loopback only/);
  }
  const idp = await spawnDevIdp(tempDir('idp-'));
  t.teardown(() => idp.stop());
  t.equal(await statusAddressedTo(`${idp.url}/auth/v1/token?grant_type=password`, 'attacker.example', 'POST'), 421, 'a token asked by another name is refused');
  t.equal(await statusAddressedTo(`${idp.url}/auth/v1/authorize?redirect_to=http://127.0.0.1/`, 'attacker.example'), 421, 'and so is the sign-in form');
  t.equal(await statusAddressedTo(`${idp.url}/auth/v1/.well-known/jwks.json`, 'dev-idp'), 200, 'its public key set answers any name');
  const away = await fetch(`${idp.url}/auth/v1/authorize?provider=google&redirect_to=${encodeURIComponent('https://attacker.example/login')}`);
  t.equal(away.status, 400, 'tokens are never sent to another machine');
  const form = await fetch(`${idp.url}/auth/v1/authorize?provider=google&redirect_to=${encodeURIComponent('http://127.0.0.1:8080/login')}`);
  t.equal(form.status, 200);
  t.match(await form.text(), /type="email"/, 'an e-mail-only sign-in form');
  const signed = await fetch(`${idp.url}/auth/v1/authorize`, {
    method: 'POST',
    body: new URLSearchParams({ email: 'Ana@Example.com', redirect_to: 'http://127.0.0.1:8080/login' }),
    redirect: 'manual',
  });
  t.equal(signed.status, 303, 'the form sends the browser back');
  t.match(signed.headers.get('location'), /^http:\/\/127\.0\.0\.1:8080\/login#access_token=[\w-]+\.[\w-]+\.[\w-]+&token_type=bearer/);
});

t.test('dev:idp --container: every interface, the issuer browsers use, still signing for loopback names only', async (t) => {
  const refusals = [
    [['--container'], /--container and --public-url go together/],
    [['--public-url', 'http://127.0.0.1:9999'], /--container and --public-url go together/],
    [['--container', '--public-url', 'http://idp.example.com:9999'], /--public-url must be an http\(s\) origin on loopback/],
    [['--container', '--public-url', 'http://127.0.0.1:9999/auth'], /--public-url must be an http\(s\) origin on loopback/],
  ] as const;
  for (const [args, message] of refusals) {
    const refused = await devIdpExit(args);
    t.equal(refused.code, 2, `${args.join(' ')} is refused`);
    t.match(refused.err, message);
  }
  const PUBLIC = 'http://127.0.0.1:9';
  const idp = await spawnDevIdp(tempDir('idp-'), ['--container', '--public-url', PUBLIC]);
  t.teardown(() => idp.stop());
  t.equal(idp.url, PUBLIC, 'it names the address browsers use');
  const port = Number(/on port (\d+) of every interface/.exec(idp.banner)?.[1]);
  t.ok(port > 0, 'and the port it listens on');
  const other = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (other) t.equal(await statusAddressedTo(`http://${other}:${port}/auth/v1/health`, other), 200, `it answers on ${other}, not only loopback`);
  const token = await fetch(`http://127.0.0.1:${port}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ana@example.com' }),
  });
  t.equal(token.status, 200, 'a token for a loopback name');
  const { access_token } = (await token.json()) as { access_token: string };
  t.equal(decodeJwt(access_token).iss, `${PUBLIC}/auth/v1`, "its issuer is the public address's");
  t.equal(
    await statusAddressedTo(`http://127.0.0.1:${port}/auth/v1/token?grant_type=password`, 'dev-idp', 'POST'),
    421,
    'a token asked by the network name is refused',
  );
});

t.test('a server pointed at dev:idp signs in with its tokens, and an organization made for an e-mail becomes its owner’s', async (t) => {
  const dataDir = tempDir('first-hour-idp-');
  const idp = await spawnDevIdp(dataDir);
  t.teardown(() => idp.stop());
  const made = await orgCreate({ DATA_DIR: dataDir, SESSION_SECRET: '' }, '--name', 'Invited shop', '--owner-email', 'Owner@Example.com');
  t.equal(made.code, 0, made.err);
  const invited = JSON.parse(made.out) as { organization_id: string; owner: { email: string; status: string } };
  t.same(invited.owner, { email: 'Owner@Example.com', status: 'invited' });

  const server = await spawnServer({ DATA_DIR: dataDir, AUTHPROVIDER_URL: idp.url, SESSION_SECRET: '' });
  t.teardown(() => server.stop('SIGKILL'));
  const signIn = async (email: string) => {
    const token = await fetch(`${idp.url}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    t.equal(token.status, 200, 'the token endpoint answers');
    const { access_token } = (await token.json()) as { access_token: string };
    const session = await fetch(`${server.base}/api/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token }),
    });
    t.equal(session.status, 200, 'the server verifies the token as any provider’s');
    const cookies = Object.fromEntries(session.headers.getSetCookie().map((c) => c.split(';')[0]!.split('=') as [string, string]));
    return {
      cookie: `service_session=${cookies.service_session}; service_csrf=${cookies.service_csrf}`,
      'x-csrf-token': cookies.service_csrf!,
      'content-type': 'application/json',
    };
  };

  const owner = await signIn('owner@example.com');
  const { organizations: mine } = (await (await fetch(`${server.base}/api/organizations`, { headers: owner })).json()) as {
    organizations: { id: string; role: string }[];
  };
  t.same(
    mine.map((o) => [o.id, o.role]),
    [[invited.organization_id, 'owner']],
    'the invited owner owns it at the first sign-in',
  );

  const someone = await signIn('someone@example.com');
  t.same(await (await fetch(`${server.base}/api/organizations`, { headers: someone })).json(), { organizations: [] }, 'another user sees nothing of it');
  const org = (await (
    await fetch(`${server.base}/api/organizations`, { method: 'POST', headers: someone, body: JSON.stringify({ name: 'Their shop', stage: 'test' }) })
  ).json()) as { id: string };
  const key = (await (
    await fetch(`${server.base}/api/organizations/${org.id}/api-keys`, { method: 'POST', headers: someone, body: JSON.stringify({ name: 'first' }) })
  ).json()) as { secret: string };
  t.match(key.secret, /^sk_test_/, 'a key made in the signed-in way');
  await scoresAndRecords(t, server, key.secret, 'idp-1');
  const forged = await fetch(`${server.base}/api/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ access_token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' }),
  });
  t.equal(forged.status, 401, 'nothing is bypassed: an unsigned token is refused');
});
