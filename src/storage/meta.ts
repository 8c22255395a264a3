// The service's own key/value settings (`service_meta`): JSON values under a key, for state that
// belongs to the deployment as a whole rather than to an organization.

import type { Queryable } from './db.ts';

/** A service_meta value as stored (JSON), or undefined when the key is absent. */
export async function getMeta<T>(db: Queryable, key: string): Promise<T | undefined> {
  const [row] = await db.query<{ value: T }>('SELECT value FROM service_meta WHERE key = $1', [key]);
  return row ? row.value : undefined;
}

/** Stores a JSON-serialisable value under key, replacing any earlier one (undefined is stored as null). */
export async function setMeta(db: Queryable, key: string, value: unknown): Promise<void> {
  await db.query(
    `INSERT INTO service_meta (key, value) VALUES ($1, $2::text::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [key, JSON.stringify(value ?? null)],
  );
}
