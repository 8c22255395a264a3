// Secrets the service hands out (session cookies, CSRF tokens, API keys) and how they are kept:
// 32 random bytes each, and in the database only as HMAC-SHA256 keyed with SESSION_SECRET, with a
// different label per kind so that one kind's hash is never valid as another's. A stolen database
// therefore holds nothing that signs anyone in or scores with anyone's key; changing SESSION_SECRET
// ends every session and invalidates every API key (docs/operating.md).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type SecretKind = 'session' | 'csrf' | 'api_key';

/** 32 random bytes, URL-safe (43 characters). */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A short random identifier for a public handle (`ses_…`, `org_…`, `key_…`). */
export function randomId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

export class SecretHasher {
  private readonly key: Buffer;

  constructor(sessionSecret: string) {
    this.key = Buffer.from(sessionSecret, 'utf8');
  }

  hash(kind: SecretKind, secret: string): string {
    return createHmac('sha256', this.key).update(`${kind}\0${secret}`).digest('base64url');
  }

  /** Whether `secret` hashes to `expected`, in constant time. */
  matches(kind: SecretKind, secret: string, expected: string): boolean {
    const a = Buffer.from(this.hash(kind, secret));
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
