// A stand-in for the hosted authentication project, on loopback, answering exactly as the real one
// would: its key set at `/auth/v1/.well-known/jwks.json` (ES256 and RS256 keys made by jose, which
// the test can rotate) and `/auth/v1/user` for the fallback. It mints the tokens tests sign in with.

import { createServer, type Server } from 'node:http';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface SigningKey {
  kid: string;
  alg: 'ES256' | 'RS256';
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicPem: string;
}

export async function makeKey(alg: 'ES256' | 'RS256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

export class IdentityProvider {
  /** Keys the key set publishes (tests change it to rotate). */
  published: SigningKey[] = [];
  jwksRequests = 0;
  /** Users `/auth/v1/user` recognises, by token. */
  readonly users = new Map<string, { id: string; email: string }>();
  /** Requests `/auth/v1/user` has answered, and the `apikey` header the last one carried. */
  userRequests = 0;
  lastApiKey: string | undefined;
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      if (req.url === '/auth/v1/.well-known/jwks.json') {
        this.jwksRequests++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: this.published.map((k) => k.publicJwk) }));
        return;
      }
      if (req.url === '/auth/v1/user') {
        this.userRequests++;
        const apikey = req.headers.apikey;
        this.lastApiKey = Array.isArray(apikey) ? apikey[0] : apikey;
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const user = token ? this.users.get(token) : undefined;
        res.writeHead(user ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(user ?? { msg: 'invalid JWT' }));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this;
  }

  get issuer(): string {
    return `${this.url}/auth/v1`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface Claims {
  sub?: string;
  email?: string;
  iss?: string;
  /** Seconds from now (negative: already expired). */
  expiresIn?: number;
  name?: string;
  /** The provider's `email_verified` claim (left out: the provider vouches for the e-mail). */
  emailVerified?: boolean;
}

/** A token signed with an asymmetric key. */
export function signWith(key: SigningKey, issuer: string, c: Claims = {}): Promise<string> {
  return build(c, issuer).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

/** A token signed with an HMAC secret (legacy HS256 projects). */
export function signHs256(secret: string | Uint8Array, issuer: string, c: Claims = {}): Promise<string> {
  return build(c, issuer)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(typeof secret === 'string' ? new TextEncoder().encode(secret) : secret);
}

/** An unsigned token (`alg: none`). */
export function unsigned(issuer: string, c: Claims = {}): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: c.iss ?? issuer, sub: c.sub ?? 'user-1', email: c.email ?? 'ana@example.com', iat: now, exp: now + (c.expiresIn ?? 3600) })}.`;
}

function build(c: Claims, issuer: string): SignJWT {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    email: c.email ?? 'ana@example.com',
    ...(c.emailVerified === undefined ? {} : { email_verified: c.emailVerified }),
    user_metadata: { full_name: c.name ?? 'Ana Lima', avatar_url: 'https://example.com/a.png' },
    role: 'authenticated',
  })
    .setIssuer(c.iss ?? issuer)
    .setSubject(c.sub ?? 'user-1')
    .setAudience('authenticated')
    .setIssuedAt(now - 5)
    .setExpirationTime(now + (c.expiresIn ?? 3600));
}
