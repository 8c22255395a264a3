// Accounts as the service runs them: signing in (a verified identity-provider token becomes a
// server-side session; the token itself is never stored or logged), resolving a session cookie,
// checking CSRF tokens, signing out, issuing, rotating and revoking API keys, authenticating a key,
// and counting its use. SQL lives in storage/accounts-store.ts; secrets.ts makes and hashes secrets.
// Key use is counted in memory and written every second (write-behind), so scoring with a key costs
// no write; a crash loses at most a second of counts. A key found live is trusted for KEY_TRUST_MS
// before it is looked up again, since a lookup per request is a large share of a scoring request's
// time on the embedded database. A change to keys or to a model made through this process takes
// effect at once; one made through another process sharing the database within KEY_TRUST_MS.
// A session and its user are answered in the contract's shapes (contract/auth.ts: `sessionAnswer`,
// `whoIsCalling`); the cookies are the HTTP layer's.

import type { Config } from '../../config.ts';
import type { Db } from '../../storage/db.ts';
import {
  claimInvitations,
  findLiveApiKey,
  findSession,
  insertApiKey,
  insertSession,
  recordApiKeyUse,
  revokeApiKey,
  revokeSession,
  rotateApiKey,
  upsertUser,
  type ApiKeyRow,
  type LiveApiKey,
  type SessionRow,
  type UserRow,
} from '../../storage/accounts-store.ts';
import { randomId, randomSecret, SecretHasher } from './secrets.ts';
import { TokenError, TokenVerifier, type TokenVerifierOptions } from './tokens.ts';
import { AppError } from '../errors.ts';
import type { ApiKey } from '../../contract/organizations.ts';
import type { Me, SessionResponse, User } from '../../contract/auth.ts';
import type { Identity } from '../../storage/accounts-store.ts';

export interface SignedIn {
  user: UserRow;
  session: SessionRow;
}

export interface NewSession extends SignedIn {
  /** Cookie values: shown to the browser once, never stored. */
  cookie: string;
  csrf: string;
}

function userView(u: UserRow): User {
  return { id: u.id, email: u.email, name: u.name, avatar_url: u.avatar_url };
}

/** What a sign-in answers besides its cookies: the user, the CSRF token and when the session ends. */
export function sessionAnswer(s: NewSession): SessionResponse {
  return { authenticated: true, user: userView(s.user), csrf_token: s.csrf, expires_at: s.session.expires_at.toISOString() };
}

/** Who is calling: the signed-in user and when their session ends, or a guest (with whether sign-in
 *  is configured at all). */
export function whoIsCalling(signedIn: SignedIn | undefined, authConfigured: boolean): Me {
  if (!signedIn) return { authenticated: false, auth_configured: authConfigured };
  return { authenticated: true, auth_configured: true, user: userView(signedIn.user), expires_at: signedIn.session.expires_at.toISOString() };
}

/** A key's public listing (docs/operating.md): never the secret or its hash. */
export function publicKey(k: ApiKeyRow): ApiKey {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    last4: k.last4,
    created_at: k.created_at.toISOString(),
    last_used_at: k.last_used_at?.toISOString() ?? null,
    revoked_at: k.revoked_at?.toISOString() ?? null,
  };
}

/** How long a key found live is used without asking the database again. */
export const KEY_TRUST_MS = 1000;
/** Most keys trusted at once (the map is emptied past it). */
const TRUSTED_KEYS_LIMIT = 10_000;

export class Accounts {
  private readonly db: Db;
  private readonly clock: () => number;

  /** Undefined without an identity provider (AUTHPROVIDER_URL): keys still work, sign-in does not. */
  readonly verifier: TokenVerifier | undefined;
  /** Keys found live, by their secret's keyed hash, with when to look them up again. */
  private readonly trusted = new Map<string, { key: LiveApiKey; until: number }>();
  private readonly hasher: SecretHasher;
  private readonly ttlMs: number;
  /** Uses per key and UTC day not yet written, with the last time. */
  private pendingUse = new Map<string, { keyId: string; day: string; requests: number; at: Date }>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    db: Db,
    config: Config,
    /** What secrets are hashed with (storage/server-secret.ts). */
    secret: string,
    clock: () => number = Date.now,
    verifierOptions: Partial<TokenVerifierOptions> = {},
  ) {
    this.db = db;
    this.clock = clock;
    this.verifier = config.AUTHPROVIDER_URL
      ? new TokenVerifier({
          authUrl: config.AUTHPROVIDER_URL,
          jwksUrl: config.AUTHPROVIDER_JWKS_URL,
          jwtSecret: config.AUTHPROVIDER_JWT_SECRET,
          userFallback: config.AUTH_USER_FALLBACK,
          anonKey: config.AUTHPROVIDER_ANON_KEY,
          ...verifierOptions,
        })
      : undefined;
    this.hasher = new SecretHasher(secret);
    this.ttlMs = config.SESSION_TTL_HOURS * 3_600_000;
  }

  /** Verifies the token and opens a session for its user. A refused token is `unauthorized`
   *  (`not_signed_in`, with `token_problem` in the detail); `refused` hears the problem first, so
   *  the caller can log it. */
  async signIn(token: string, refused?: (problem: TokenError['code']) => void): Promise<NewSession> {
    if (!this.verifier)
      throw new AppError('auth_not_configured', 'Sign-in is not configured on this server.', 'Set AUTHPROVIDER_URL (README, Configuration) and restart.');
    let who: Identity;
    try {
      who = await this.verifier.verify(token);
    } catch (e) {
      if (e instanceof TokenError) {
        refused?.(e.code);
        throw new AppError(
          'not_signed_in',
          `The access token was refused: ${e.message}.`,
          'Sign in again with the identity provider and send the new access token.',
          { token_problem: e.code },
        );
      }
      throw e;
    }
    const user = await upsertUser(this.db, who);
    // An organization made from the command line for this e-mail becomes theirs (org:create).
    if (who.email && who.email_verified) await claimInvitations(this.db, user.id, who.email);
    const cookie = randomSecret();
    const csrf = randomSecret();
    const session: SessionRow = {
      id: randomId('ses'),
      user_id: user.id,
      csrf_hash: this.hasher.hash('csrf', csrf),
      expires_at: new Date(this.clock() + this.ttlMs),
      revoked_at: null,
    };
    await insertSession(this.db, {
      id: session.id,
      secretHash: this.hasher.hash('session', cookie),
      csrfHash: session.csrf_hash,
      userId: user.id,
      expiresAt: session.expires_at,
    });
    return { user, session, cookie, csrf };
  }

  /** The live session a cookie value belongs to, with its user; undefined if unknown, ended or revoked. */
  async resolve(cookie: string): Promise<SignedIn | undefined> {
    if (cookie.length < 20 || cookie.length > 200) return undefined;
    const found = await findSession(this.db, this.hasher.hash('session', cookie));
    if (!found || found.session.revoked_at || found.session.expires_at.getTime() <= this.clock()) return undefined;
    return found;
  }

  /** Whether the CSRF header matches the session's token. */
  csrfMatches(session: SessionRow, header: string | undefined): boolean {
    return typeof header === 'string' && header.length > 0 && header.length < 200 && this.hasher.matches('csrf', header, session.csrf_hash);
  }

  async signOut(session: SessionRow): Promise<void> {
    await revokeSession(this.db, session.id, new Date(this.clock()));
  }

  /** A new key for an organization: its row and the secret, which is shown once. */
  async createKey(orgId: string, stage: 'test' | 'live', name: string, createdBy: string): Promise<{ key: ApiKeyRow; secret: string }> {
    const prefix = stage === 'live' ? 'sk_live_' : 'sk_test_';
    const secret = `${prefix}${randomSecret()}`;
    const key = await insertApiKey(this.db, {
      id: randomId('key'),
      orgId,
      name,
      prefix,
      last4: secret.slice(-4),
      secretHash: this.hasher.hash('api_key', secret),
      createdBy,
    });
    return { key, secret };
  }

  /** A new secret for a live key (the old one stops at once); undefined if the key is revoked. */
  async rotateKey(key: ApiKeyRow): Promise<{ key: ApiKeyRow; secret: string } | undefined> {
    const secret = `${key.prefix}${randomSecret()}`;
    const rotated = await rotateApiKey(this.db, key.id, this.hasher.hash('api_key', secret), secret.slice(-4), new Date(this.clock()));
    this.forgetKeys();
    return rotated ? { key: rotated, secret } : undefined;
  }

  async revokeKey(key: ApiKeyRow): Promise<ApiKeyRow> {
    const revoked = (await revokeApiKey(this.db, key.id, new Date(this.clock())))!;
    this.forgetKeys();
    return revoked;
  }

  /** Forgets every key trusted so far (after a change to keys or to an organization's model). */
  forgetKeys(): void {
    this.trusted.clear();
  }

  /** The live key a bearer secret belongs to, with its organization's stage and active model. A
   *  request it authenticates is one use of the key (the organization's usage counts requests of
   *  every kind made with it: scores, replays, reads, outcomes, list changes). */
  async authenticateKey(secret: string): Promise<LiveApiKey | undefined> {
    if (!/^sk_(test|live)_[A-Za-z0-9_-]{20,100}$/.test(secret)) return undefined;
    const hash = this.hasher.hash('api_key', secret);
    const now = this.clock();
    const known = this.trusted.get(hash);
    if (known && known.until > now) {
      this.recordUse(known.key.id);
      return known.key;
    }
    const key = await findLiveApiKey(this.db, hash);
    if (!key) {
      this.trusted.delete(hash);
      return undefined;
    }
    if (this.trusted.size >= TRUSTED_KEYS_LIMIT) this.trusted.clear();
    this.trusted.set(hash, { key, until: now + KEY_TRUST_MS });
    this.recordUse(key.id);
    return key;
  }

  /** Counts one use of a key (written within a second). */
  recordUse(keyId: string): void {
    const at = new Date(this.clock());
    const day = at.toISOString().slice(0, 10);
    const k = `${keyId}\0${day}`;
    const entry = this.pendingUse.get(k);
    if (entry) {
      entry.requests++;
      entry.at = at;
    } else this.pendingUse.set(k, { keyId, day, requests: 1, at });
    this.flushTimer ??= setTimeout(() => void this.flushUse(), 1000);
  }

  /** Writes the counted uses; resolves when they are stored. */
  flushUse(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = [...this.pendingUse.values()];
    this.pendingUse = new Map();
    this.flushing = this.flushing.then(async () => {
      for (const u of batch) {
        try {
          await recordApiKeyUse(this.db, u.keyId, u.day, u.requests, u.at);
        } catch {
          // Counted again with the next flush rather than lost.
          const k = `${u.keyId}\0${u.day}`;
          const now = this.pendingUse.get(k);
          if (now) now.requests += u.requests;
          else this.pendingUse.set(k, u);
        }
      }
    });
    return this.flushing;
  }
}
