// A running service with sign-in configured through a stand-in identity provider on loopback, for
// the live-data tests: members sign in with real tokens, create organizations and API keys through
// the API, and score with those keys, exactly as a customer would.

import type { LightMyRequestResponse } from 'fastify';
import { IdentityProvider, makeKey, signWith, type Claims, type SigningKey } from './idp.ts';
import { freshDatabase, start, type Backend, type Running } from './server.ts';
import { dataDir as newDataDir } from './data-dir.ts';
import type { Config } from '../../src/config.ts';
import type { StartOptions } from '../../src/app/service.ts';
import type { AppOptions } from '../../src/http/app.ts';

export interface Member {
  userId: string;
  headers: Record<string, string>;
}

export interface Organization {
  id: string;
  key: string;
  keyId: string;
  owner: Member;
}

export interface LiveService {
  s: Running;
  idp: IdentityProvider;
  signIn(sub: string): Promise<Member>;
  /** A sign-in with a token of these claims (a new session each time): what `signIn` does with
   *  `sub` and `<sub>@example.com`, for a test that needs another e-mail or an unverified one. */
  signInWith(claims: Claims & { sub: string }): Promise<Member>;
  organization(name: string, owner?: Member, stage?: 'test' | 'live'): Promise<Organization>;
  /** POST /api/v1/risk/score with the organization's key. */
  score(org: Organization, body: Record<string, unknown>): Promise<LightMyRequestResponse>;
  /** The same, sent again as a client honouring Retry-After while the answer is a 503 that has one:
   *  `history_loading` (an organization's first score whose load outlasts the score's deadline), or
   *  `database_unavailable` (a load that ended just before the deadline, leaving too little of it
   *  for the commit: the retry answers the stored decision, or stores it). */
  scoreLoaded(org: Organization, body: Record<string, unknown>): Promise<LightMyRequestResponse>;
  /** POST /api/risk/score as a guest. */
  guest(body: Record<string, unknown>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startLive(o: {
  backend: Backend;
  overrides?: Partial<Config>;
  dataDir?: string;
  databaseUrl?: string;
  idp?: IdentityProvider;
  signingKey?: SigningKey;
  clock?: () => number;
  startOptions?: StartOptions;
  /** The HTTP log (none unless given). */
  logger?: AppOptions['logger'];
}): Promise<LiveService> {
  const idp = o.idp ?? (await new IdentityProvider().start());
  const key = o.signingKey ?? (await makeKey('ES256', 'k1'));
  idp.published = [key];
  const s = await start({
    backend: o.backend,
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
    ...(o.databaseUrl ? { databaseUrl: o.databaseUrl } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.startOptions ? { startOptions: o.startOptions } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'z'.repeat(48), authConfigured: true, SCORE_RATE_PER_MINUTE: 100_000, ...o.overrides },
  });
  const members = new Map<string, Member>();
  const signInWith = async (claims: Claims & { sub: string }): Promise<Member> => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/auth/session',
      payload: { access_token: await signWith(key, idp.issuer, claims) },
    });
    if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`);
    const c = Object.fromEntries(res.cookies.map((x) => [x.name, x.value]));
    const me = (await s.app.inject({ url: '/api/auth/me', headers: { cookie: `service_session=${c.service_session}` } })).json();
    return {
      userId: me.user.id as string,
      headers: { cookie: `service_session=${c.service_session}; service_csrf=${c.service_csrf}`, 'x-csrf-token': c.service_csrf! },
    };
  };
  const signIn = async (sub: string): Promise<Member> => {
    const known = members.get(sub);
    if (known) return known;
    const m = await signInWith({ sub, email: `${sub}@example.com` });
    members.set(sub, m);
    return m;
  };
  const score: LiveService['score'] = (org, body) =>
    s.app.inject({ method: 'POST', url: '/api/v1/risk/score', headers: { authorization: `Bearer ${org.key}` }, payload: body });
  return {
    s,
    idp,
    signIn,
    signInWith,
    async organization(name, owner, stage = 'test') {
      const m = owner ?? (await signIn(`owner-of-${name}`));
      const org = (await s.app.inject({ method: 'POST', url: '/api/organizations', headers: m.headers, payload: { name, stage } })).json();
      const k = (await s.app.inject({ method: 'POST', url: `/api/organizations/${org.id}/api-keys`, headers: m.headers, payload: { name: 'server' } })).json();
      return { id: org.id, key: k.secret, keyId: k.id, owner: m };
    },
    score,
    async scoreLoaded(org, body) {
      for (let tries = 1; ; tries++) {
        const res = await score(org, body);
        if (res.statusCode !== 503 || res.headers['retry-after'] === undefined || tries >= 60) return res;
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after']) * 1000));
      }
    },
    guest: (body) => s.app.inject({ method: 'POST', url: '/api/risk/score', payload: body }),
    async close() {
      await s.close();
      if (!o.idp) await idp.close();
    },
  };
}

/** A subtest, as tap passes it to a test's callback. */
interface Test {
  teardown(fn: () => unknown): void;
}

/**
 * A live service for one test on one back end, with its own database (a fresh PostgreSQL database,
 * or an embedded one in a temporary directory) and identity provider, closed when the test ends.
 * `restart()` stops the server and starts it again on the same database; `clock`, the server's
 * time (ms), when the test steps it.
 */
export async function liveFor(
  t: Test,
  backend: Backend,
  overrides: Partial<Config> = {},
  startOptions?: StartOptions,
  clock?: () => number,
): Promise<{ live: LiveService; restart(): Promise<LiveService> }> {
  const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
  const idp = await new IdentityProvider().start();
  const dataDir = newDataDir('live-');
  const open = () =>
    startLive({
      backend,
      dataDir,
      ...(db ? { databaseUrl: db.url } : {}),
      idp,
      overrides,
      ...(startOptions ? { startOptions } : {}),
      ...(clock ? { clock } : {}),
    });
  const holder = {
    live: await open(),
    async restart() {
      await holder.live.close();
      holder.live = await open();
      return holder.live;
    },
  };
  t.teardown(async () => {
    await holder.live.close();
    await idp.close();
    await db?.drop();
  });
  return holder;
}
