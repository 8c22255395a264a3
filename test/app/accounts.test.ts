// Accounts end to end through the real app (inject), on both storage back ends, against a loopback
// identity provider with keys made by jose: sign-in with ES256, RS256 (and key rotation) and HS256
// tokens, every refused token of the specification, sessions and CSRF, logout, organizations,
// API keys (shown once, masked, rotated, revoked) and their usage, `/api/v1/risk/score`, 404 across
// organizations, and that no response, listing or log line carries a secret.

import t from 'tap';
import { Writable } from 'node:stream';
import { backends, start, type Running } from '../support/server.ts';
import { IdentityProvider, makeKey, signHs256, signWith, unsigned } from '../support/idp.ts';

const SESSION_SECRET = 'test-session-secret-of-a-reasonable-length-0123456789';
const HS_SECRET = 'legacy-project-jwt-secret-0123456789abcdef';
const score = { amount: 42.5, customer_id: 'C000001', merchant_id: 'M00001', location: 'Lisbon', payment_type: 'card_present' };

type Cookies = { session: string; csrf: string };

function cookiesOf(res: { cookies: { name: string; value: string; httpOnly?: boolean }[] }): Cookies {
  const session = res.cookies.find((c) => c.name === 'service_session');
  const csrf = res.cookies.find((c) => c.name === 'service_csrf');
  if (!session || !csrf) throw new Error('no session cookies');
  return { session: session.value, csrf: csrf.value };
}

for (const backend of backends()) {
  t.test(`accounts on ${backend.name}`, async (t) => {
    const idp = await new IdentityProvider().start();
    t.teardown(() => idp.close());
    let es = await makeKey('ES256', 'es-1');
    const rs = await makeKey('RS256', 'rs-1');
    idp.published = [es, rs];

    const logLines: string[] = [];
    const logStream = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(chunk.toString());
        cb();
      },
    });
    const s: Running = await start({
      backend,
      overrides: {
        AUTHPROVIDER_URL: idp.url,
        SESSION_SECRET,
        AUTHPROVIDER_JWT_SECRET: HS_SECRET,
        authConfigured: true,
        BACKEND_URL: 'https://api.example.com/',
      },
      logger: { level: 'info', stream: logStream },
      startOptions: { auth: { jwksCooldownMs: 0 } },
    });
    t.teardown(() => s.close());
    const app = s.app;
    const secrets: string[] = [];

    const signIn = async (token: string) => app.inject({ method: 'POST', url: '/api/auth/session', payload: { access_token: token } });
    const as = (c: Cookies, csrf = true) => ({ cookie: `service_session=${c.session}; service_csrf=${c.csrf}`, ...(csrf ? { 'x-csrf-token': c.csrf } : {}) });

    t.equal((await app.inject('/api/health')).json().auth_configured, true, 'health says sign-in is configured');
    t.same(
      (await app.inject('/api/docs/json')).json().servers,
      [{ url: 'https://api.example.com', description: 'this service' }],
      'BACKEND_URL is the origin in the API reference',
    );

    // --- signing in --------------------------------------------------------------------------
    const esToken = await signWith(es, idp.issuer, { sub: 'user-ana', email: 'ana@example.com' });
    secrets.push(esToken);
    const res = await signIn(esToken);
    t.equal(res.statusCode, 200, 'an ES256 token signs in');
    const ana = cookiesOf(res);
    secrets.push(ana.session, ana.csrf);
    const sessionCookie = res.cookies.find((c) => c.name === 'service_session')!;
    t.equal(sessionCookie.httpOnly, true, 'the session cookie is HttpOnly');
    t.notOk(res.cookies.find((c) => c.name === 'service_csrf')!.httpOnly, 'the CSRF cookie is readable');
    t.equal(res.json().user.email, 'ana@example.com');
    t.equal(res.json().user.name, 'Ana Lima');

    const me = (await app.inject({ url: '/api/auth/me', headers: as(ana, false) })).json();
    t.same({ authenticated: me.authenticated, id: me.user.id }, { authenticated: true, id: 'user-ana' }, 'me knows the session');
    t.same((await app.inject('/api/auth/me')).json(), { authenticated: false, auth_configured: true }, 'a guest is not authenticated');

    const rsToken = await signWith(rs, idp.issuer, { sub: 'user-bo', email: 'bo@example.com', name: 'Bo' });
    secrets.push(rsToken);
    const boRes = await signIn(rsToken);
    t.equal(boRes.statusCode, 200, 'an RS256 token signs in');
    const bo = cookiesOf(boRes);
    secrets.push(bo.session, bo.csrf);

    const hsToken = await signHs256(HS_SECRET, idp.issuer, { sub: 'user-cy' });
    secrets.push(hsToken);
    t.equal((await signIn(hsToken)).statusCode, 200, 'an HS256 token of the legacy project signs in');

    // Key rotation: the project publishes a new key and signs with it; the old key is withdrawn.
    const es2 = await makeKey('ES256', 'es-2');
    idp.published = [es2, rs];
    const rotated = await signWith(es2, idp.issuer, { sub: 'user-ana' });
    t.equal((await signIn(rotated)).statusCode, 200, 'a token signed with a newly published key signs in');
    es = es2;

    // --- refused tokens ----------------------------------------------------------------------
    const stranger = await makeKey('ES256', 'es-unknown');
    const refused: [string, string][] = [
      ['an unsigned token (alg none)', unsigned(idp.issuer)],
      ['a token from another issuer', await signWith(es, 'https://other-project.example.com/auth/v1')],
      ['an expired token', await signWith(es, idp.issuer, { expiresIn: -60 })],
      ['a token signed by an unknown key', await signWith({ ...stranger, kid: 'es-2' }, idp.issuer)],
      ['a token signed by a key the set does not publish', await signWith(stranger, idp.issuer)],
      ['an HS256 token signed with the public key as secret', await signHs256(rs.publicPem, idp.issuer)],
      ['a token of a withdrawn key', await signWith(await makeKey('ES256', 'es-1'), idp.issuer)],
      ['garbage', 'not-a-jwt'],
    ];
    const good = await signWith(es, idp.issuer, { sub: 'user-ana' });
    const [h, p, sig] = good.split('.');
    const tampered = JSON.parse(Buffer.from(p!, 'base64url').toString());
    tampered.sub = 'user-admin';
    refused.push(['a tampered payload', `${h}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${sig}`]);
    for (const [what, token] of refused) {
      const r = await signIn(token);
      t.equal(r.statusCode, 401, `refused: ${what}`);
      t.equal(r.json().detail.reason, 'not_signed_in', `reason for ${what}`);
      t.equal(r.cookies.length, 0, `no cookie for ${what}`);
    }
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/session', payload: {} })).statusCode, 422, 'a missing token is 422');

    // --- CSRF --------------------------------------------------------------------------------
    const create = (_c: Cookies, headers: Record<string, string>, name = 'Acme') =>
      app.inject({ method: 'POST', url: '/api/organizations', headers, payload: { name } });
    let r = await create(ana, as(ana, false));
    t.equal(r.statusCode, 403, 'no CSRF header: 403');
    t.equal(r.json().detail.reason, 'csrf_failed');
    r = await create(ana, { ...as(ana, false), 'x-csrf-token': bo.csrf });
    t.equal(r.statusCode, 403, "another session's CSRF token: 403");
    for (const blank of ['', '  ', '\f', '\u00a0\t']) {
      const x = await create(ana, as(ana), blank);
      t.equal(x.statusCode, 422, `a name of white space only (${JSON.stringify(blank)}) is refused`);
      t.match(x.json().detail.fields, [{ path: 'body.name', message: /empty or white space only/ }]);
    }
    t.same((await app.inject({ url: '/api/organizations', headers: as(ana) })).json(), { organizations: [] }, 'nothing was created by refused requests');
    r = await create(ana, as(ana));
    t.equal(r.statusCode, 201, 'with the CSRF header: created');
    const acme = r.json();
    t.same({ stage: acme.stage, role: acme.role }, { stage: 'test', role: 'owner' });
    t.equal(
      (await app.inject({ method: 'POST', url: '/api/organizations', payload: { name: 'x' } })).json().detail.reason,
      'not_signed_in',
      'a guest cannot create one',
    );

    // --- organizations across users: 404 ------------------------------------------------------
    const boOrg = (await create(bo, as(bo), 'Bo Ltd')).json();
    const one = (await app.inject({ url: `/api/organizations/${acme.id}`, headers: as(ana) })).json();
    t.same(
      one.members.map((m: { user_id: string; role: string }) => [m.user_id, m.role]),
      [['user-ana', 'owner']],
      'members and stage',
    );
    t.same(
      (await app.inject({ url: '/api/organizations', headers: as(ana) })).json().organizations.map((o: { id: string }) => o.id),
      [acme.id],
      'list shows mine only',
    );
    for (const url of [
      `/api/organizations/${boOrg.id}`,
      `/api/organizations/${boOrg.id}/api-keys`,
      `/api/organizations/${boOrg.id}/usage`,
      '/api/organizations/org_doesnotexist',
    ]) {
      const x = await app.inject({ url, headers: as(ana) });
      t.equal(x.statusCode, 404, `another organization is 404: ${url}`);
    }
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/organizations/${boOrg.id}/api-keys`, headers: as(ana), payload: { name: 'k' } })).statusCode,
      404,
      'creating a key in another organization is 404',
    );

    // --- API keys ----------------------------------------------------------------------------
    r = await app.inject({ method: 'POST', url: `/api/organizations/${acme.id}/api-keys`, headers: as(ana), payload: { name: 'checkout' } });
    t.equal(r.statusCode, 201);
    const key = r.json();
    secrets.push(key.secret);
    t.match(key.secret, /^sk_test_[A-Za-z0-9_-]{40,}$/, 'a test organization gets an sk_test_ key');
    t.equal(key.last4, key.secret.slice(-4));
    const listed = (await app.inject({ url: `/api/organizations/${acme.id}/api-keys`, headers: as(ana) })).json();
    t.same(
      Object.keys(listed.api_keys[0]).sort(),
      ['created_at', 'id', 'last4', 'last_used_at', 'name', 'prefix', 'revoked_at'],
      'listed masked: no secret field',
    );
    t.notOk(JSON.stringify(listed).includes(key.secret), 'the listing never shows the secret');
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/api-keys/${key.id}/rotate`, headers: as(bo) })).statusCode,
      404,
      "another organization's key is 404",
    );

    const v1 = (secret: string | undefined) =>
      app.inject({ method: 'POST', url: '/api/v1/risk/score', headers: secret === undefined ? {} : { authorization: `Bearer ${secret}` }, payload: score });
    r = await v1(key.secret);
    t.equal(r.statusCode, 200, 'a key scores');
    t.type(r.json().risk_score, 'number');
    t.ok(r.json().reasons.length > 0, 'the same response as the dashboard route');
    for (const [what, secret] of [
      ['no key', undefined],
      ['a malformed key', 'sk_test_short'],
      ['an unknown key', `sk_test_${'A'.repeat(43)}`],
      ['a session cookie value', ana.session],
    ] as const) {
      const x = await v1(secret);
      t.equal(x.statusCode, 401, `401 with ${what}`);
      t.equal(x.json().detail.reason, 'invalid_api_key');
    }

    r = await app.inject({ method: 'POST', url: `/api/api-keys/${key.id}/rotate`, headers: as(ana) });
    t.equal(r.statusCode, 200, 'rotated');
    const rotatedKey = r.json();
    secrets.push(rotatedKey.secret);
    t.not(rotatedKey.secret, key.secret);
    t.equal((await v1(key.secret)).statusCode, 401, 'the old secret stops at once');
    t.equal((await v1(rotatedKey.secret)).statusCode, 200, 'the new secret works');
    const read = await app.inject({ url: '/api/v1/transactions?limit=1', headers: { authorization: `Bearer ${rotatedKey.secret}` } });
    t.equal(read.statusCode, 200, 'the key reads the decision log');

    const usage = (await app.inject({ url: `/api/organizations/${acme.id}/usage`, headers: as(ana) })).json();
    t.equal(usage.keys[0].requests, 3, 'usage counts every request the key authenticated (two scores and a read), not the refused ones');
    t.equal(usage.daily.length, 1);
    t.ok(usage.keys[0].last_used_at, 'last use recorded');

    r = await app.inject({ method: 'POST', url: `/api/api-keys/${key.id}/revoke`, headers: as(ana) });
    t.equal(r.statusCode, 200);
    t.ok(r.json().revoked_at, 'revoked');
    t.equal((await v1(rotatedKey.secret)).statusCode, 401, 'a revoked key gets 401');
    t.equal((await app.inject({ method: 'POST', url: `/api/api-keys/${key.id}/rotate`, headers: as(ana) })).statusCode, 409, 'a revoked key cannot be rotated');

    // A member who is not an owner may read but not manage keys.
    await s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, 'user-bo', 'analyst')`, [acme.id]);
    t.equal((await app.inject({ url: `/api/organizations/${acme.id}/api-keys`, headers: as(bo) })).statusCode, 200, 'a member reads the keys');
    r = await app.inject({ method: 'POST', url: `/api/organizations/${acme.id}/api-keys`, headers: as(bo), payload: { name: 'mine' } });
    t.equal(r.statusCode, 403, 'a member cannot create keys');
    t.equal(r.json().detail.reason, 'forbidden');

    // --- logout ------------------------------------------------------------------------------
    t.equal((await app.inject({ method: 'POST', url: '/api/auth/logout', headers: as(ana, false) })).statusCode, 403, 'logout needs the CSRF header too');
    r = await app.inject({ method: 'POST', url: '/api/auth/logout', headers: as(ana) });
    t.equal(r.statusCode, 204, 'logged out');
    t.ok(
      r.cookies.some((c) => c.name === 'service_session' && c.value === ''),
      'the cookie is cleared',
    );
    t.equal((await app.inject({ url: '/api/auth/me', headers: as(ana) })).json().authenticated, false, 'the revoked session is a guest');
    r = await app.inject({ method: 'POST', url: '/api/organizations', headers: as(ana), payload: { name: 'after' } });
    t.equal(r.statusCode, 401, 'a revoked session cannot act');
    t.equal(r.json().detail.reason, 'not_signed_in');

    // --- nothing secret stored or shown -------------------------------------------------------
    const tables = await s.service.db.query<{ t: string }>(
      `SELECT row_to_json(x)::text AS t FROM (SELECT * FROM users) x UNION ALL SELECT row_to_json(x)::text FROM (SELECT * FROM sessions) x UNION ALL SELECT row_to_json(x)::text FROM (SELECT * FROM api_keys) x`,
    );
    const stored = tables.map((x) => x.t).join('\n');
    for (const secret of secrets) t.notOk(stored.includes(secret), 'no token, cookie or key is stored in clear');
    const hashes = (
      await s.service.db.query<{ h: string }>(
        'SELECT secret_hash AS h FROM api_keys UNION ALL SELECT secret_hash FROM sessions UNION ALL SELECT csrf_hash FROM sessions',
      )
    ).map((x) => x.h);
    const logs = logLines.join('');
    for (const secret of [...secrets, ...hashes]) t.notOk(logs.includes(secret), 'no secret or hash in the log');
    t.ok(logLines.length > 0, 'the log was captured');
  });
}

t.test('sign-in not configured', async (t) => {
  const s = await start({});
  t.teardown(() => s.close());
  const app = s.app;
  t.equal((await app.inject('/api/health')).json().auth_configured, false);
  t.same((await app.inject('/api/auth/me')).json(), { authenticated: false, auth_configured: false }, 'me: a guest');
  for (const [method, url, payload] of [
    ['POST', '/api/auth/session', { access_token: 'x.y.z' }],
    ['POST', '/api/auth/logout', undefined],
    ['GET', '/api/organizations', undefined],
    ['POST', '/api/organizations', { name: 'Acme' }],
    ['GET', '/api/organizations/org_x', undefined],
    ['GET', '/api/organizations/org_x/api-keys', undefined],
    ['POST', '/api/organizations/org_x/api-keys', { name: 'k' }],
    ['POST', '/api/api-keys/key_x/rotate', undefined],
    ['POST', '/api/api-keys/key_x/revoke', undefined],
    ['GET', '/api/organizations/org_x/usage', undefined],
    ['GET', '/api/organizations/org_x/datasets', undefined],
    ['GET', '/api/jobs?organization_id=org_x', undefined],
    ['GET', '/api/jobs', undefined],
    ['POST', '/api/models/model_x/activate', undefined],
    ['POST', '/api/models/model_x/deactivate', undefined],
    ['POST', '/api/training/jobs', { dataset_id: 'ds_x' }],
  ] as const) {
    const r = await app.inject({ method, url, ...(payload ? { payload } : {}) });
    t.equal(r.statusCode, 503, `${method} ${url}: 503`);
    t.equal(r.json().detail.reason, 'auth_not_configured');
    t.match(r.json().detail.fix, /AUTHPROVIDER_URL/, 'the fix names what to set');
  }
  // The customer surface checks keys without sign-in (keys are hashed with the embedded database's
  // own secret here): an unknown key is refused as anywhere, not 503.
  for (const [method, url, payload] of [
    ['POST', '/api/v1/risk/score', score],
    ['GET', '/api/v1/transactions/tx_1', undefined],
    ['POST', '/api/v1/outcomes', { outcomes: [{ transaction_id: 'tx_1', outcome: 'fraud' }] }],
  ] as const) {
    const r = await app.inject({ method, url, headers: { authorization: `Bearer sk_live_${'w'.repeat(43)}` }, ...(payload ? { payload } : {}) });
    t.equal(r.statusCode, 401, `${method} ${url} with an unknown key: 401`);
    t.equal(r.json().detail.reason, 'invalid_api_key');
  }
  const keyless = await app.inject({ method: 'POST', url: '/api/v1/risk/score', payload: score });
  t.equal(keyless.statusCode, 401, 'the customer surface without a key: 401 whatever the configuration');
  t.equal(keyless.json().detail.reason, 'invalid_api_key');
  const r = await app.inject({ method: 'POST', url: '/api/risk/score', payload: score });
  t.equal(r.statusCode, 200, 'guest scoring still works');
  t.equal((await app.inject('/api/models')).json().models.length, 1, 'models: the built-in one');
  const up = await app.inject({
    method: 'POST',
    url: '/api/datasets/upload',
    headers: { 'content-type': 'text/csv' },
    payload: 'amount,customer_id,merchant_id\n10,C1,M1\n',
  });
  t.equal(up.statusCode, 201, 'guest uploads still work');
  t.equal((await app.inject({ method: 'POST', url: '/api/datasets/score', payload: { dataset_id: up.json().id } })).statusCode, 202, 'and guest jobs');
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/datasets/upload?organization_id=org_x',
        headers: { 'content-type': 'text/csv' },
        payload: 'amount,customer_id,merchant_id\n10,C1,M1\n',
      })
    ).json().detail.reason,
    'auth_not_configured',
    'naming an organization says sign-in is not configured',
  );
});
