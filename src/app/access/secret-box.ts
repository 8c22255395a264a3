// Secrets the service must use again, not only recognise: a webhook endpoint's signing secret signs
// every delivery, so unlike an API key it cannot be kept as a hash. It is kept sealed instead
// (AES-256-GCM, a fresh nonce per seal) under a key derived from the service's hashing secret
// (SESSION_SECRET, or the embedded database's own), which is never in the database: a stolen
// database holds no usable signing secret. Changing the hashing secret makes the sealed secrets
// unreadable; each endpoint then needs its secret rotated (docs/operating.md).

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  constructor(hashingSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(hashingSecret, 'utf8'), Buffer.alloc(0), 'fraud-risk sealed secrets v1', 32));
  }

  seal(secret: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** The secret; throws SealedSecretUnreadable when it was sealed under another hashing secret. */
  open(sealed: string): string {
    const [version, body] = sealed.split('.', 2);
    if (version !== VERSION || !body) throw new SealedSecretUnreadable();
    const bytes = Buffer.from(body, 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedSecretUnreadable();
    }
  }
}

export class SealedSecretUnreadable extends Error {
  constructor() {
    super('a sealed secret cannot be opened with this hashing secret (it changed since the secret was sealed); rotate the secret');
    this.name = 'SealedSecretUnreadable';
  }
}
