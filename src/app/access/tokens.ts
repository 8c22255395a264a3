// Verifying the identity provider's access tokens (the specification's "Token verification"), with
// jose. The token's own header picks the path, and only from an allow-list:
// - ES256 / RS256: the hosted project's public keys from `{auth_url}/auth/v1/.well-known/jwks.json`
//   (or AUTHPROVIDER_JWKS_URL, where the server reaches the provider by another name), cached for
//   ten minutes (a longer cache would break key rotation; jose refetches at once when a token names
//   a key id it has not seen, at most every 30 s);
// - HS256: only when AUTHPROVIDER_JWT_SECRET is configured (legacy projects). An HS256 token is never
//   checked against a public key, so a token "signed" with the public key as an HMAC secret fails;
// - the fallback that asks the hosted project who the token belongs to (`GET {auth_url}/auth/v1/user`),
//   one network round trip, only with AUTH_USER_FALLBACK=true (off by default).
// In every case the issuer must equal `{auth_url}/auth/v1`, the token must not be expired, and it
// must name a subject. `alg: none` and every other algorithm are refused before any key is looked at.
// Nothing here stores the token; callers keep only the identity it proves.

import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Identity } from '../../storage/accounts-store.ts';

export interface TokenVerifierOptions {
  /** `{auth_url}`, without a trailing slash. */
  authUrl: string;
  /** Where the key set is fetched, when not at `{auth_url}/auth/v1/.well-known/jwks.json`. */
  jwksUrl?: string | undefined;
  /** HS256 secret of a legacy project. */
  jwtSecret?: string | undefined;
  /** Ask the hosted project when the local checks cannot decide (off unless configured). */
  userFallback?: boolean;
  /** The project's anonymous key, sent with the fallback request. */
  anonKey?: string | undefined;
  /** Key-set cache lifetime, ms (ten minutes). */
  jwksCacheMs?: number;
  /** Least time between two key-set fetches caused by unknown key ids, ms (30 s; tests use 0). */
  jwksCooldownMs?: number;
  fetch?: typeof fetch;
}

export type TokenErrorCode =
  | 'malformed'
  | 'algorithm_not_allowed'
  | 'wrong_issuer'
  | 'expired'
  | 'bad_signature'
  | 'unknown_key'
  | 'no_subject'
  | 'provider_unreachable'
  | 'rejected_by_provider';

/** Why a token was refused: a short, stable code for logs and tests; callers answer 401. */
export class TokenError extends Error {
  readonly code: TokenErrorCode;

  constructor(code: TokenErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

const ASYMMETRIC = ['ES256', 'RS256'];
const JWKS_CACHE_MS = 10 * 60_000;

export class TokenVerifier {
  private readonly o: TokenVerifierOptions;

  readonly issuer: string;
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;
  private readonly secret: Uint8Array | undefined;

  constructor(o: TokenVerifierOptions) {
    this.o = o;
    const base = o.authUrl.replace(/\/+$/, '');
    this.issuer = `${base}/auth/v1`;
    this.jwks = createRemoteJWKSet(new URL(o.jwksUrl ?? `${this.issuer}/.well-known/jwks.json`), {
      cacheMaxAge: o.jwksCacheMs ?? JWKS_CACHE_MS,
      cooldownDuration: o.jwksCooldownMs ?? 30_000,
      timeoutDuration: 5_000,
    });
    this.secret = o.jwtSecret ? new TextEncoder().encode(o.jwtSecret) : undefined;
  }

  /** The identity a token proves, or a TokenError saying why not. */
  async verify(token: string): Promise<Identity> {
    let alg: string | undefined;
    let claims: JWTPayload;
    try {
      alg = decodeProtectedHeader(token).alg;
      claims = decodeJwt(token);
    } catch {
      throw new TokenError('malformed', 'the token is not a signed JWT');
    }
    // Checked before any signature work, so that no path can be steered by a forged header.
    if (claims.iss !== this.issuer) throw new TokenError('wrong_issuer', 'the token was issued by another project');
    try {
      if (alg && ASYMMETRIC.includes(alg)) {
        const { payload } = await jwtVerify(token, this.jwks, { issuer: this.issuer, algorithms: ASYMMETRIC });
        return identityOf(payload);
      }
      if (alg === 'HS256' && this.secret) {
        const { payload } = await jwtVerify(token, this.secret, { issuer: this.issuer, algorithms: ['HS256'] });
        return identityOf(payload);
      }
    } catch (e) {
      const refused = refusal(e);
      // The fallback is for tokens the local paths cannot check (an unreachable key set, a key not
      // published yet), never a second chance for an expired or tampered token.
      if (this.o.userFallback && (refused.code === 'provider_unreachable' || refused.code === 'unknown_key')) return this.askProvider(token, claims);
      throw refused;
    }
    // An HS256 token when no legacy secret is configured: only the provider can say whose it is.
    if (this.o.userFallback && alg === 'HS256') return this.askProvider(token, claims);
    throw new TokenError('algorithm_not_allowed', `tokens signed with ${alg ?? 'no algorithm'} are not accepted`);
  }

  /** The fallback: the hosted project says who the token belongs to (one round trip). */
  private async askProvider(token: string, claims: JWTPayload): Promise<Identity> {
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now()) throw new TokenError('expired', 'the token has expired');
    const f = this.o.fetch ?? fetch;
    let res: Response;
    try {
      res = await f(`${this.issuer}/user`, {
        headers: { authorization: `Bearer ${token}`, ...(this.o.anonKey ? { apikey: this.o.anonKey } : {}) },
        signal: AbortSignal.timeout(5_000),
      });
    } catch {
      throw new TokenError('provider_unreachable', 'the identity provider could not be reached');
    }
    if (!res.ok) throw new TokenError('rejected_by_provider', 'the identity provider does not recognise the token');
    const user = (await res.json().catch(() => null)) as { id?: unknown; email?: unknown; user_metadata?: Record<string, unknown> } | null;
    if (!user || typeof user.id !== 'string' || user.id !== claims.sub)
      throw new TokenError('rejected_by_provider', 'the identity provider named another user');
    return identityOf({ sub: user.id, email: user.email, user_metadata: user.user_metadata } as JWTPayload);
  }
}

function refusal(e: unknown): TokenError {
  if (e instanceof TokenError) return e;
  if (e instanceof joseErrors.JWTExpired) return new TokenError('expired', 'the token has expired');
  if (e instanceof joseErrors.JWTClaimValidationFailed)
    return new TokenError(e.claim === 'iss' ? 'wrong_issuer' : 'malformed', `the token's ${e.claim} claim is not acceptable`);
  if (e instanceof joseErrors.JWKSNoMatchingKey) return new TokenError('unknown_key', 'the token was signed by a key the project does not publish');
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return new TokenError('bad_signature', 'the token signature does not verify');
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return new TokenError('algorithm_not_allowed', 'the token algorithm is not accepted');
  if (e instanceof joseErrors.JWKSTimeout || e instanceof joseErrors.JWKSInvalid || (e instanceof Error && /fetch|ECONNREFUSED|network/i.test(e.message))) {
    return new TokenError('provider_unreachable', "the project's public keys could not be fetched");
  }
  return new TokenError('malformed', 'the token could not be verified');
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v.slice(0, 500) : null;
}

function identityOf(payload: JWTPayload): Identity {
  if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new TokenError('no_subject', 'the token names no user');
  const meta = (payload.user_metadata ?? {}) as Record<string, unknown>;
  return {
    id: payload.sub,
    email: text(payload.email),
    email_verified: payload.email_verified !== false && meta.email_verified !== false,
    name: text(meta.full_name) ?? text(meta.name),
    avatar_url: text(meta.avatar_url) ?? text(meta.picture),
  };
}
