// Edges of sign-in the main accounts test does not reach, through the real app (inject), real JWTs
// signed with jose keys and the loopback identity provider:
// - session expiry under the service clock (on every storage back end: the expiry goes through the
//   database), and expired or revoked session cookies on public routes being a guest's;
// - everything optional switched on (one PGlite start): cookie attributes with COOKIE_SECURE and
//   COOKIE_DOMAIN, the provider fallback (AUTH_USER_FALLBACK), per-key and per-IP rate limits,
//   CORS with credentials, malformed cookies on public routes, and /api/config showing no secret;
// - everything optional switched off (one PGlite start): plain cookies, no fallback, no CORS.

import t from 'tap';
import type { InjectOptions } from 'fastify';
import { backends, start, type Running } from '../support/server.ts';
import { IdentityProvider, makeKey, signWith, type SigningKey } from '../support/idp.ts';

const SESSION_SECRET = 'edges-session-secret-of-a-reasonable-length-0123456789';
const HS_SECRET = 'edges-legacy-project-jwt-secret-0123456789abcdef';
const ANON_KEY = 'edges-anon-key-public-0123456789';
const score = { amount: 42.5, customer_id: 'C000001', merchant_id: 'M00001', location: 'Lisbon', payment_type: 'card_present' };
const HOUR = 3_600_000;

type Injected = { statusCode: number; headers: Record<string, unknown>; body: string; json(): any; cookies: { name: string; value: string }[] };
type Cookies = { session: string; csrf: string };

function cookiesOf(res: Injected): Cookies {
  const session = res.cookies.find((c) => c.name === 'service_session');
  const csrf = res.cookies.find((c) => c.name === 'service_csrf');
  if (!session || !csrf) throw new Error(`no session cookies (status ${res.statusCode})`);
  return { session: session.value, csrf: csrf.value };
}

/** The raw Set-Cookie line of one cookie, as a browser would read it. */
function setCookieLine(res: Injected, name: string): string | undefined {
  const h = res.headers['set-cookie'];
  const lines = Array.isArray(h) ? (h as string[]) : typeof h === 'string' ? [h] : [];
  return lines.find((l) => l.startsWith(`${name}=`));
}

/** A Set-Cookie line's attributes, names lower-cased (flags map to true). */
function attributes(line: string): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (const part of line.split(';').slice(1)) {
    const [k, ...v] = part.trim().split('=');
    if (k) out.set(k.toLowerCase(), v.length ? v.join('=') : true);
  }
  return out;
}

const as = (c: Cookies, csrf = true) => ({ cookie: `service_session=${c.session}; service_csrf=${c.csrf}`, ...(csrf ? { 'x-csrf-token': c.csrf } : {}) });

// One identity provider for the whole file, so a token minted once is valid on every start.
const idp = await new IdentityProvider().start();
t.teardown(() => idp.close());
const es: SigningKey = await makeKey('ES256', 'es-1');
idp.published = [es];
/** A key the project never publishes: its tokens are "correctly issued" but cannot be checked locally. */
const ghost: SigningKey = await makeKey('ES256', 'ghost-1');

const injector = (s: Running) => (o: InjectOptions | string) => s.app.inject(o) as unknown as Promise<Injected>;
const signInWith = (s: Running, token: string) => injector(s)({ method: 'POST', url: '/api/auth/session', payload: { access_token: token } });

// --- 2 & 6: session expiry under the service clock, and dead sessions on public routes ----------
for (const backend of backends()) {
  t.test(`session expiry and dead cookies on ${backend.name}`, async (t) => {
    let now = Date.now();
    const s = await start({
      backend,
      clock: () => now,
      overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET, SESSION_TTL_HOURS: 1 },
      startOptions: { auth: { jwksCooldownMs: 0 } },
    });
    t.teardown(() => s.close());
    const inject = injector(s);

    const signedInAt = now;
    const res = await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-exp', email: 'exp@example.com' }));
    t.equal(res.statusCode, 200, 'signed in');
    const c = cookiesOf(res);
    const expiresAt = signedInAt + HOUR;
    t.equal(res.json().expires_at, new Date(expiresAt).toISOString(), 'the session ends SESSION_TTL_HOURS after the service clock');
    const expires = attributes(setCookieLine(res, 'service_session')!).get('expires');
    t.equal(typeof expires === 'string' ? Date.parse(expires) : NaN, Math.floor(expiresAt / 1000) * 1000, 'the cookie expires with the session');

    t.equal((await inject({ url: '/api/auth/me', headers: as(c) })).json().authenticated, true, 'live at first');
    now = expiresAt - 1000;
    t.equal((await inject({ url: '/api/auth/me', headers: as(c) })).json().authenticated, true, 'live a second before the end');
    t.equal((await inject({ url: '/api/organizations', headers: as(c) })).statusCode, 200, 'a signed-in route works a second before the end');

    now = expiresAt + 1000;
    t.same((await inject({ url: '/api/auth/me', headers: as(c) })).json(), { authenticated: false, auth_configured: true }, 'after the end, me says a guest');
    for (const [method, url, payload] of [
      ['GET', '/api/organizations', undefined],
      ['POST', '/api/organizations', { name: 'Late' }],
      ['POST', '/api/auth/logout', undefined],
    ] as const) {
      const r = await inject({ method, url, headers: as(c), ...(payload ? { payload } : {}) });
      t.equal(r.statusCode, 401, `expired session: ${method} ${url} is 401`);
      t.equal(r.json().detail.reason, 'not_signed_in', `expired session: ${method} ${url} says not_signed_in`);
    }
    // 6: an expired session on public routes is a guest's, even for a POST without the CSRF header.
    t.equal((await inject({ url: '/api/health', headers: as(c, false) })).statusCode, 200, 'expired cookie: health 200');
    t.equal(
      (await inject({ method: 'POST', url: '/api/risk/score', headers: as(c, false), payload: score })).statusCode,
      200,
      'expired cookie, no CSRF header: guest scoring 200',
    );

    // A sign-in after the clock moved takes its expiry from the service clock too.
    const again = await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-exp' }));
    t.equal(again.json().expires_at, new Date(now + HOUR).toISOString(), 'a new session starts from the service clock');

    // Two sessions of one user: logging one out leaves the other; the revoked one is a guest's.
    const one = cookiesOf(again);
    const two = cookiesOf(await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-exp' })));
    t.equal((await inject({ method: 'POST', url: '/api/auth/logout', headers: as(one) })).statusCode, 204, 'logged out of one session');
    t.equal((await inject({ url: '/api/auth/me', headers: as(one) })).json().authenticated, false, 'the revoked session is over');
    t.equal((await inject({ url: '/api/auth/me', headers: as(two) })).json().authenticated, true, "the user's other session lives on");
    t.equal((await inject({ url: '/api/health', headers: as(one, false) })).statusCode, 200, 'revoked cookie: health 200');
    let r = await inject({ method: 'POST', url: '/api/risk/score', headers: as(one, false), payload: score });
    t.equal(r.statusCode, 200, 'revoked cookie, no CSRF header: guest scoring 200');
    t.type(r.json().risk_score, 'number');
    r = await inject({ method: 'POST', url: '/api/organizations', headers: as(one), payload: { name: 'After' } });
    t.equal(r.statusCode, 401, 'revoked cookie with its old CSRF token cannot act');
    t.equal(r.json().detail.reason, 'not_signed_in');
  });
}

// --- everything optional on: 1, 3, 4, 5, 6, 7 ---------------------------------------------------
t.test('everything optional switched on', async (t) => {
  const DASH = 'https://dash.example.com';
  const s = await start({
    overrides: {
      AUTHPROVIDER_URL: idp.url,
      SESSION_SECRET,
      AUTHPROVIDER_JWT_SECRET: HS_SECRET,
      AUTHPROVIDER_ANON_KEY: ANON_KEY,
      AUTH_USER_FALLBACK: true,
      SESSION_TTL_HOURS: 2,
      COOKIE_SECURE: true,
      COOKIE_DOMAIN: '.example.com',
      CORS_ORIGINS: DASH,
      SCORE_RATE_PER_MINUTE: 3,
    },
    startOptions: { auth: { jwksCooldownMs: 0 } },
  });
  t.teardown(() => s.close());
  const inject = injector(s);

  // 1. Cookie attributes.
  const before = Date.now();
  const res = await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-on', email: 'on@example.com' }));
  t.equal(res.statusCode, 200, 'signed in');
  const ana = cookiesOf(res);
  for (const [name, httpOnly] of [
    ['service_session', true],
    ['service_csrf', false],
  ] as const) {
    const line = setCookieLine(res, name);
    t.ok(line, `${name} is set`);
    const a = attributes(line ?? '');
    t.equal(a.get('secure'), true, `${name}: Secure`);
    t.equal(a.get('domain'), '.example.com', `${name}: Domain=.example.com`);
    t.equal(a.get('samesite'), 'Lax', `${name}: SameSite=Lax`);
    t.equal(a.get('path'), '/', `${name}: Path=/`);
    t.equal(a.has('httponly'), httpOnly, `${name}: HttpOnly ${httpOnly ? 'set' : 'not set'}`);
    const expires = a.get('expires');
    const at = typeof expires === 'string' ? Date.parse(expires) : NaN;
    t.ok(at >= before + 2 * HOUR - 2000 && at <= Date.now() + 2 * HOUR, `${name}: Expires about SESSION_TTL_HOURS (2) ahead`);
    t.equal(at, Math.floor(Date.parse(res.json().expires_at) / 1000) * 1000, `${name}: Expires is the session's end`);
  }
  // Logging out must clear the cookies with the same Domain and Path, or the browser keeps them.
  const other = cookiesOf(await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-on' })));
  const out = await inject({ method: 'POST', url: '/api/auth/logout', headers: as(other) });
  t.equal(out.statusCode, 204, 'logged out');
  for (const name of ['service_session', 'service_csrf']) {
    const a = attributes(setCookieLine(out, name) ?? '');
    t.equal(a.get('domain'), '.example.com', `logout clears ${name} on Domain=.example.com`);
    t.equal(a.get('path'), '/', `logout clears ${name} on Path=/`);
    t.equal(a.get('secure'), true, `logout clears ${name} with Secure`);
    const expires = a.get('expires');
    t.ok(typeof expires === 'string' && Date.parse(expires) <= Date.now(), `logout expires ${name}`);
  }

  // 3. The provider fallback.
  await t.test('provider fallback', async (t) => {
    const asked = () => idp.userRequests;
    const known = await signWith(ghost, idp.issuer, { sub: 'user-fb', email: 'fb@example.com' });
    idp.users.set(known, { id: 'user-fb', email: 'fb@example.com' });
    let n = asked();
    let r = await signInWith(s, known);
    t.equal(r.statusCode, 200, 'a token of an unpublished key that the provider recognises signs in');
    t.equal(r.json().user.id, 'user-fb');
    t.equal(r.json().user.email, 'fb@example.com');
    t.equal(asked(), n + 1, 'the provider was asked once');
    t.equal(idp.lastApiKey, ANON_KEY, 'the request carried the anon key as apikey');
    t.equal((await inject({ url: '/api/auth/me', headers: as(cookiesOf(r)) })).json().user?.id, 'user-fb', 'the session works');

    const unknown = await signWith(ghost, idp.issuer, { sub: 'user-nobody' });
    n = asked();
    r = await signInWith(s, unknown);
    t.equal(r.statusCode, 401, 'a token the provider does not recognise is refused');
    t.equal(r.json().detail.token_problem, 'rejected_by_provider');
    t.equal(r.cookies.length, 0, 'no cookie');
    t.equal(asked(), n + 1, 'the provider was asked');

    const impostor = await signWith(ghost, idp.issuer, { sub: 'user-admin' });
    idp.users.set(impostor, { id: 'user-fb', email: 'fb@example.com' });
    r = await signInWith(s, impostor);
    t.equal(r.statusCode, 401, 'a token the provider attributes to another user is refused');
    t.equal(r.json().detail.token_problem, 'rejected_by_provider');

    /** A token the provider would vouch for, refused on its own checks without asking it. */
    const refusedWithoutAsking = async (token: string, problem: string, what: string) => {
      idp.users.set(token, { id: 'user-fb', email: 'fb@example.com' });
      const before = asked();
      const refused = await signInWith(s, token);
      t.equal(refused.statusCode, 401, what);
      t.equal(refused.json().detail.token_problem, problem);
      t.equal(asked(), before, 'without asking the provider');
    };
    await refusedWithoutAsking(
      await signWith(ghost, idp.issuer, { sub: 'user-fb', expiresIn: -60 }),
      'expired',
      'an expired token of an unpublished key is refused',
    );

    // A tampered token of a published key is not a case for the fallback either.
    const good = await signWith(es, idp.issuer, { sub: 'user-fb' });
    const [h, p] = good.split('.');
    await refusedWithoutAsking(
      `${h}.${p}.${Buffer.from('x'.repeat(64)).toString('base64url')}`,
      'bad_signature',
      'a badly signed token of a published key is refused',
    );
  });

  // 4. Rate limits: per key on /api/v1, per IP on the dashboard route, separately.
  await t.test('rate limits', async (t) => {
    const org = await inject({ method: 'POST', url: '/api/organizations', headers: as(ana), payload: { name: 'Limits' } });
    t.equal(org.statusCode, 201, 'organization created');
    const key = async (name: string) => {
      const r = await inject({ method: 'POST', url: `/api/organizations/${org.json().id}/api-keys`, headers: as(ana), payload: { name } });
      t.equal(r.statusCode, 201, `key ${name} created`);
      return r.json().secret as string;
    };
    const a = await key('a');
    const b = await key('b');
    const v1 = (secret: string) => inject({ method: 'POST', url: '/api/v1/risk/score', headers: { authorization: `Bearer ${secret}` }, payload: score });
    // Refused keys are answered before the limit is counted: they spend nobody's budget.
    for (let i = 0; i < 3; i++) t.equal((await v1(`sk_test_${'Z'.repeat(43)}`)).statusCode, 401, 'an unknown key is 401');
    for (let i = 1; i <= 3; i++) {
      const ok = await v1(a);
      t.equal(ok.statusCode, 200, `key a, request ${i}: 200`);
      // The documented headers (docs/integrating.md, Headers): the window's allowance, what is left
      // of it, and the seconds until it starts again.
      t.equal(ok.headers['x-ratelimit-limit'], '3', 'X-RateLimit-Limit');
      t.equal(ok.headers['x-ratelimit-remaining'], String(3 - i), 'X-RateLimit-Remaining');
      const reset = Number(ok.headers['x-ratelimit-reset']);
      t.ok(Number.isInteger(reset) && reset >= 0 && reset <= 60, `X-RateLimit-Reset is 0..60 s (${String(ok.headers['x-ratelimit-reset'])})`);
    }
    const limited = await v1(a);
    t.equal(limited.statusCode, 429, 'key a, request 4 within the minute: 429');
    t.equal(limited.json().detail.reason, 'rate_limited');
    const retry = Number(limited.headers['retry-after']);
    t.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After is 1..60 s (${String(limited.headers['retry-after'])})`);
    t.equal(limited.json().detail.retry_after_seconds, retry, 'detail.retry_after_seconds matches Retry-After');
    t.equal((await v1(b)).statusCode, 200, 'key b of the same organization (same IP) still scores');

    // The dashboard route: per client IP, its own window.
    const dash = (ip: string) => inject({ method: 'POST', url: '/api/risk/score', remoteAddress: ip, payload: score });
    t.equal((await dash('127.0.0.1')).statusCode, 200, "the dashboard route from the IP the keys used: 200 (not the keys' window)");
    for (let i = 1; i <= 3; i++) t.equal((await dash('10.0.0.1')).statusCode, 200, `dashboard from 10.0.0.1, request ${i}: 200`);
    const dl = await dash('10.0.0.1');
    t.equal(dl.statusCode, 429, 'dashboard from 10.0.0.1, request 4: 429');
    t.ok(dl.headers['retry-after'], 'with Retry-After');
    const spoofed = await inject({
      method: 'POST',
      url: '/api/risk/score',
      remoteAddress: '10.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.9' },
      payload: score,
    });
    t.equal(spoofed.statusCode, 429, 'X-Forwarded-For does not escape the per-IP window (no trusted proxy)');
    t.equal((await dash('10.0.0.2')).statusCode, 200, 'another IP still scores on the dashboard route');
    t.equal((await v1(b)).statusCode, 200, "key b is not limited by the dashboard IP's window");
    t.equal((await v1(a)).statusCode, 429, 'key a is still limited');
    // /api/v1 authenticates the key only: a session cookie there needs no CSRF header and grants nothing.
    const c = await key('c');
    const withCookie = await inject({
      method: 'POST',
      url: '/api/v1/risk/score',
      headers: { authorization: `Bearer ${c}`, ...as(ana, false) },
      payload: score,
    });
    t.equal(withCookie.statusCode, 200, 'a key request carrying a session cookie (no CSRF header) scores');
    const cookieOnly = await inject({ method: 'POST', url: '/api/v1/risk/score', headers: as(ana), payload: score });
    t.equal(cookieOnly.statusCode, 401, 'a session cookie is not an API key');
    t.equal(cookieOnly.json().detail.reason, 'invalid_api_key');
  });

  // 5. CORS with credentials for the configured origin only.
  await t.test('CORS', async (t) => {
    const preflight = (origin: string) =>
      inject({
        method: 'OPTIONS',
        url: '/api/organizations',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-csrf-token' },
      });
    const ok = await preflight(DASH);
    t.ok(ok.statusCode < 300, `preflight from the dashboard answers ${ok.statusCode}`);
    t.equal(ok.headers['access-control-allow-origin'], DASH, 'allow-origin is the dashboard origin');
    t.equal(ok.headers['access-control-allow-credentials'], 'true', 'credentials allowed');
    t.match(String(ok.headers['access-control-allow-headers'] ?? '').toLowerCase(), /(^|[ ,])x-csrf-token($|[ ,])/, 'x-csrf-token is an allowed header');
    t.match(String(ok.headers['access-control-allow-methods'] ?? ''), /POST/, 'POST is allowed');
    const evil = await preflight('https://evil.example.com');
    t.notOk(evil.headers['access-control-allow-origin'], 'no allow-origin for another origin');
    const get = await inject({ url: '/api/auth/me', headers: { origin: DASH, ...as(ana, false) } });
    t.equal(get.headers['access-control-allow-origin'], DASH, 'an actual request from the dashboard gets allow-origin');
    t.equal(get.json().authenticated, true, 'and its session');
    t.match(String(get.headers.vary ?? ''), /origin/i, "Vary: Origin, so a cache never serves one origin's answer to another");
    t.notOk(
      (await inject({ url: '/api/auth/me', headers: { origin: 'https://evil.example.com' } })).headers['access-control-allow-origin'],
      'an actual request from another origin does not',
    );
  });

  // 6. Malformed or oversized session cookies on public routes are a guest's.
  await t.test('malformed cookies on public routes', async (t) => {
    const bad: [string, string][] = [
      ['too short', 'abc'],
      ['oversized', 'A'.repeat(6000)],
      ['bad percent-encoding', '%E0%A4%A'],
      ['unknown but well-formed', 'Q'.repeat(43)],
      ['quoted', `"${'q'.repeat(43)}"`],
      ['empty', ''],
    ];
    let ip = 20;
    for (const [what, value] of bad) {
      const headers = { cookie: `service_session=${value}; service_csrf=whatever` };
      const h = await inject({ url: '/api/health', headers });
      t.equal(h.statusCode, 200, `${what} cookie: health 200`);
      const r = await inject({ method: 'POST', url: '/api/risk/score', remoteAddress: `10.0.1.${ip++}`, headers, payload: score });
      t.equal(r.statusCode, 200, `${what} cookie, no CSRF header: guest scoring 200`);
      t.equal((await inject({ url: '/api/auth/me', headers })).json().authenticated, false, `${what} cookie: a guest`);
    }
    // The contrast: a live session on the same route without its CSRF token is refused.
    const r = await inject({ method: 'POST', url: '/api/risk/score', remoteAddress: '10.0.2.1', headers: as(ana, false), payload: score });
    t.equal(r.statusCode, 403, 'a live session without the CSRF header is refused');
    t.equal(r.json().detail.reason, 'csrf_failed');
    // The surface is the route's, however the path is spelled: /api/%761/... is /api/v1/..., where
    // sessions play no part (no CSRF check; the API key decides).
    const v1 = await inject({ method: 'POST', url: '/api/%761/risk/score', remoteAddress: '10.0.2.2', headers: as(ana, false), payload: score });
    t.equal(v1.statusCode, 401, 'a percent-encoded /api/v1 path is the key surface');
    t.equal(v1.json().detail.reason, 'invalid_api_key');
  });

  // 7. What a browser may see.
  await t.test('public configuration', async (t) => {
    const r = await inject({ url: '/api/config' });
    t.equal(r.statusCode, 200);
    const body = r.json();
    t.equal(body.auth_configured, true, 'auth_configured');
    t.equal(body.auth_url, idp.url, 'auth_url is the project URL');
    t.equal(body.auth_anon_key, ANON_KEY, 'the anon key is shown (it is public)');
    for (const url of ['/api/config', '/api/health', '/api/docs/json']) {
      const text = (await inject({ url })).body;
      for (const [name, secret] of [
        ['SESSION_SECRET', SESSION_SECRET],
        ['AUTHPROVIDER_JWT_SECRET', HS_SECRET],
      ]) {
        t.notOk(text.includes(secret!), `${url} does not show ${name}`);
      }
    }
    t.notOk(JSON.stringify(body).match(/secret/i), 'no field of /api/config is named like a secret');
  });
});

// --- everything optional off: 1, 3, 5 without them -----------------------------------------------
t.test('everything optional switched off', async (t) => {
  const s = await start({
    overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET, AUTHPROVIDER_ANON_KEY: ANON_KEY },
    startOptions: { auth: { jwksCooldownMs: 0 } },
  });
  t.teardown(() => s.close());
  const inject = injector(s);

  const before = Date.now();
  const res = await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-off' }));
  t.equal(res.statusCode, 200, 'signed in');
  for (const [name, httpOnly] of [
    ['service_session', true],
    ['service_csrf', false],
  ] as const) {
    const a = attributes(setCookieLine(res, name) ?? '');
    t.notOk(a.has('secure'), `${name}: no Secure`);
    t.notOk(a.has('domain'), `${name}: no Domain`);
    t.equal(a.get('samesite'), 'Lax', `${name}: SameSite=Lax`);
    t.equal(a.get('path'), '/', `${name}: Path=/`);
    t.equal(a.has('httponly'), httpOnly, `${name}: HttpOnly ${httpOnly ? 'set' : 'not set'}`);
    const expires = a.get('expires');
    const at = typeof expires === 'string' ? Date.parse(expires) : NaN;
    t.ok(at >= before + 168 * HOUR - 2000 && at <= Date.now() + 168 * HOUR, `${name}: Expires the default 168 h ahead`);
  }

  // 3 without AUTH_USER_FALLBACK: the provider is never asked.
  const token = await signWith(ghost, idp.issuer, { sub: 'user-fb', email: 'fb@example.com' });
  idp.users.set(token, { id: 'user-fb', email: 'fb@example.com' });
  const n = idp.userRequests;
  const r = await signInWith(s, token);
  t.equal(r.statusCode, 401, 'a token of an unpublished key is refused without the fallback');
  t.equal(r.json().detail.token_problem, 'unknown_key');
  t.equal(idp.userRequests, n, 'the provider was not asked');

  // 5 without CORS_ORIGINS: no CORS headers at all.
  const pre = await inject({
    method: 'OPTIONS',
    url: '/api/organizations',
    headers: { origin: 'https://dash.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token' },
  });
  t.notOk(
    Object.keys(pre.headers).some((h) => h.startsWith('access-control-')),
    `no CORS headers on a preflight (status ${pre.statusCode})`,
  );
  const get = await inject({ url: '/api/health', headers: { origin: 'https://dash.example.com' } });
  t.equal(get.statusCode, 200);
  t.notOk(
    Object.keys(get.headers).some((h) => h.startsWith('access-control-')),
    'no CORS headers on a request',
  );

  const config = (await inject({ url: '/api/config' })).body;
  t.notOk(config.includes(SESSION_SECRET), '/api/config does not show SESSION_SECRET');
});

// A provider this server reaches by another name than browsers do (compose.yaml's dev-idp profile):
// the key set comes from AUTHPROVIDER_JWKS_URL, the issuer is still AUTHPROVIDER_URL's.
t.test('the key set fetched from AUTHPROVIDER_JWKS_URL, the issuer checked against AUTHPROVIDER_URL', async (t) => {
  const PUBLIC = 'http://127.0.0.1:9';
  const s = await start({
    overrides: { AUTHPROVIDER_URL: PUBLIC, AUTHPROVIDER_JWKS_URL: `${idp.url}/auth/v1/.well-known/jwks.json`, SESSION_SECRET },
    startOptions: { auth: { jwksCooldownMs: 0 } },
  });
  t.teardown(() => s.close());
  const fetched = idp.jwksRequests;
  const res = await signInWith(s, await signWith(es, `${PUBLIC}/auth/v1`, { sub: 'user-jwks' }));
  t.equal(res.statusCode, 200, 'a token naming the public issuer signs in');
  t.ok(idp.jwksRequests > fetched, 'with the key set from AUTHPROVIDER_JWKS_URL');
  const own = await signInWith(s, await signWith(es, idp.issuer, { sub: 'user-jwks' }));
  t.equal(own.statusCode, 401, "a token naming the key set's host as issuer is refused");
  t.equal(own.json().detail.token_problem, 'wrong_issuer');
});
