// The secret API keys, sessions and CSRF tokens are hashed with (app/access/secrets.ts): SESSION_SECRET when
// it is set; otherwise, on the embedded database only, one made on first use and kept beside the
// database in `DATA_DIR/session-secret` (mode 0600), so that a key made by `npm run org:create` on a
// stopped server's DATA_DIR is the same key the server checks later. On PostgreSQL there is no such
// file: processes on several machines must agree on the secret, and keeping it in the database
// would let a copy of the database check guessed keys, so there SESSION_SECRET is required for keys.

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const SECRET_FILE = 'session-secret';

export type SessionSecret = { secret: string; source: 'SESSION_SECRET' | 'data_dir' } | { secret: undefined; source: 'missing' };

/** The hashing secret the configuration gives, or the embedded database's own (made on first use). */
export function sessionSecret(c: { SESSION_SECRET?: string | undefined; DATABASE_URL?: string | undefined; DATA_DIR: string }): SessionSecret {
  if (c.SESSION_SECRET) return { secret: c.SESSION_SECRET, source: 'SESSION_SECRET' };
  if (c.DATABASE_URL) return { secret: undefined, source: 'missing' };
  const path = join(c.DATA_DIR, SECRET_FILE);
  try {
    const kept = readFileSync(path, 'utf8').trim();
    if (kept.length >= 32) return { secret: kept, source: 'data_dir' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirSync(c.DATA_DIR, { recursive: true });
  const made = randomBytes(32).toString('base64url');
  // `wx`: two processes starting at once on a fresh DATA_DIR cannot both write one; the second reads.
  try {
    writeFileSync(path, `${made}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const other = readFileSync(path, 'utf8').trim();
    if (other.length < 32)
      throw new Error(
        `${path} holds no usable secret (under 32 characters): set SESSION_SECRET, or delete the file to make a new one (keys made before then stop working)`,
      );
    return { secret: other, source: 'data_dir' };
  }
  chmodSync(path, 0o600);
  return { secret: made, source: 'data_dir' };
}
