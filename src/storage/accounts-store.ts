// SQL for accounts (migrations/004_accounts.sql): users, sessions, organizations and who belongs to
// them (a caller's membership, invitations claimed at sign-in; listing and changing an
// organization's members is members-store.ts's, bound to it), API keys and their daily usage. Secrets arrive here already hashed (src/app/access/secrets.ts) and nothing
// here ever returns a hash to a caller that could send it out: listings select the public columns.

import type { Db, Queryable } from './db.ts';
import type { Role } from '../contract/organizations.ts';

export interface UserRow {
  id: string;
  email: string | null;
  name: string | null;
  avatar_url: string | null;
  created_at: Date;
}

export interface SessionRow {
  id: string;
  user_id: string;
  csrf_hash: string;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface OrganizationRow {
  id: string;
  name: string;
  stage: 'test' | 'live';
  created_at: Date;
  role: Role;
}

export interface ApiKeyRow {
  id: string;
  organization_id: string;
  name: string;
  prefix: string;
  last4: string;
  created_at: Date;
  rotated_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Who a verified token belongs to: what the user record keeps, never the token. */
export interface Identity {
  /** The identity provider's user id (`sub`). */
  id: string;
  email: string | null;
  /** Whether the provider vouches for the e-mail (it does unless a claim says otherwise). */
  email_verified?: boolean;
  name: string | null;
  avatar_url: string | null;
}

const KEY_COLUMNS = 'id, organization_id, name, prefix, last4, created_at, rotated_at, last_used_at, revoked_at';
/** The same columns of `api_keys k` in a join. */
const K_KEY_COLUMNS = KEY_COLUMNS.split(', ')
  .map((c) => `k.${c}`)
  .join(', ');

/** Creates or refreshes the user a verified token names (identity fields only, never the token). */
export async function upsertUser(db: Queryable, who: Identity): Promise<UserRow> {
  const [row] = await db.query<UserRow>(
    `INSERT INTO users (id, email, name, avatar_url) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.email, name = EXCLUDED.name, avatar_url = EXCLUDED.avatar_url, last_seen_at = now()
     RETURNING id, email, name, avatar_url, created_at`,
    [who.id, who.email, who.name, who.avatar_url],
  );
  return row!;
}

export async function insertSession(db: Queryable, s: { id: string; secretHash: string; csrfHash: string; userId: string; expiresAt: Date }): Promise<void> {
  await db.query('INSERT INTO sessions (id, secret_hash, csrf_hash, user_id, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    s.id,
    s.secretHash,
    s.csrfHash,
    s.userId,
    s.expiresAt,
  ]);
}

/** The session whose cookie hashes to `secretHash`, whatever its state (callers check it), with
 *  its user: one query for every request that carries a session cookie. */
export async function findSession(db: Queryable, secretHash: string): Promise<{ session: SessionRow; user: UserRow } | undefined> {
  const [row] = await db.query<SessionRow & { email: string | null; name: string | null; avatar_url: string | null; user_created_at: Date }>(
    `SELECT s.id, s.user_id, s.csrf_hash, s.expires_at, s.revoked_at, u.email, u.name, u.avatar_url, u.created_at AS user_created_at
     FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.secret_hash = $1`,
    [secretHash],
  );
  if (!row) return undefined;
  return {
    session: { id: row.id, user_id: row.user_id, csrf_hash: row.csrf_hash, expires_at: row.expires_at, revoked_at: row.revoked_at },
    user: { id: row.user_id, email: row.email, name: row.name, avatar_url: row.avatar_url, created_at: row.user_created_at },
  };
}

export async function revokeSession(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, at]);
}

/** Creates an organization with its creator as owner, in one transaction. */
export async function createOrganization(db: Db, o: { id: string; name: string; stage: 'test' | 'live'; ownerId: string }): Promise<OrganizationRow> {
  const row = await createOrganizationOwnedBy(db, { id: o.id, name: o.name, stage: o.stage, createdBy: o.ownerId, ownerIds: [o.ownerId] });
  return { ...row, role: 'owner' as const };
}

/** Creates an organization made by `createdBy` (a user, or the command line's own user) whose
 *  owners are `ownerIds` (possibly none yet), and `invitedEmail` invited as its owner, in one
 *  transaction; each owner's joining and the invitation are its first membership changes. */
export async function createOrganizationOwnedBy(
  db: Db,
  o: { id: string; name: string; stage: 'test' | 'live'; createdBy: string; ownerIds: readonly string[]; invitedEmail?: string | undefined },
): Promise<Omit<OrganizationRow, 'role'>> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<Omit<OrganizationRow, 'role'>>(
      'INSERT INTO organizations (id, name, stage, created_by) VALUES ($1, $2, $3, $4) RETURNING id, name, stage, created_at',
      [o.id, o.name, o.stage, o.createdBy],
    );
    for (const owner of o.ownerIds) {
      await tx.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'owner')`, [o.id, owner]);
      await tx.query(
        `INSERT INTO membership_audit (organization_id, by, action, user_id, email, role) SELECT $1, $2, 'joined', id, email, 'owner' FROM users WHERE id = $3`,
        [o.id, o.createdBy, owner],
      );
    }
    if (o.invitedEmail) {
      const email = o.invitedEmail.toLowerCase();
      await tx.query(`INSERT INTO organization_invitations (organization_id, email, role, invited_by) VALUES ($1, $2, 'owner', $3)`, [
        o.id,
        email,
        o.createdBy,
      ]);
      await tx.query(`INSERT INTO membership_audit (organization_id, by, action, email, role) VALUES ($1, $2, 'invited', $3, 'owner')`, [
        o.id,
        o.createdBy,
        email,
      ]);
    }
    return row!;
  });
}

/** The users who signed in with this e-mail (compared without case). */
export async function usersWithEmail(db: Queryable, email: string): Promise<UserRow[]> {
  return db.query<UserRow>('SELECT id, email, name, avatar_url, created_at FROM users WHERE lower(email) = lower($1) ORDER BY created_at', [email]);
}

/** Memberships waiting for this e-mail (compared without case) become the user's (a user who
 *  already belongs keeps their role); the invitations are removed, and each membership made is
 *  audited as `joined` by the user. One statement, run at every sign-in with a verified e-mail. */
export async function claimInvitations(db: Queryable, userId: string, email: string): Promise<void> {
  await db.query(
    `WITH claimed AS (DELETE FROM organization_invitations WHERE email = lower($2) RETURNING organization_id, role),
     joined AS (
       INSERT INTO memberships (organization_id, user_id, role) SELECT organization_id, $1, role FROM claimed
       ON CONFLICT (organization_id, user_id) DO NOTHING RETURNING organization_id, role)
     INSERT INTO membership_audit (organization_id, by, action, user_id, email, role) SELECT organization_id, $1, 'joined', $1, lower($2), role FROM joined`,
    [userId, email],
  );
}

/** Organizations the user belongs to, oldest first. */
export async function organizationsOf(db: Queryable, userId: string): Promise<OrganizationRow[]> {
  return db.query<OrganizationRow>(
    `SELECT o.id, o.name, o.stage, o.created_at, m.role FROM organizations o JOIN memberships m ON m.organization_id = o.id
     WHERE m.user_id = $1 ORDER BY o.created_at, o.id`,
    [userId],
  );
}

/** The organization if the user is a member of it; undefined otherwise (callers answer 404). */
export async function organizationForMember(db: Queryable, orgId: string, userId: string): Promise<OrganizationRow | undefined> {
  const [row] = await db.query<OrganizationRow>(
    `SELECT o.id, o.name, o.stage, o.created_at, m.role FROM organizations o JOIN memberships m ON m.organization_id = o.id
     WHERE o.id = $1 AND m.user_id = $2`,
    [orgId, userId],
  );
  return row;
}

export async function insertApiKey(
  db: Queryable,
  k: { id: string; orgId: string; name: string; prefix: string; last4: string; secretHash: string; createdBy: string },
): Promise<ApiKeyRow> {
  const [row] = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, organization_id, name, prefix, last4, secret_hash, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KEY_COLUMNS}`,
    [k.id, k.orgId, k.name, k.prefix, k.last4, k.secretHash, k.createdBy],
  );
  return row!;
}

export async function apiKeysOf(db: Queryable, orgId: string): Promise<ApiKeyRow[]> {
  return db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY created_at, id`, [orgId]);
}

/** A key, if it belongs to an organization the user is a member of (else undefined: 404), with
 *  the user's role there and the organization's name. */
export async function apiKeyForMember(
  db: Queryable,
  keyId: string,
  userId: string,
): Promise<(ApiKeyRow & { role: Role; organization_name: string }) | undefined> {
  const [row] = await db.query<ApiKeyRow & { role: Role; organization_name: string }>(
    `SELECT ${K_KEY_COLUMNS}, m.role, o.name AS organization_name
     FROM api_keys k JOIN memberships m ON m.organization_id = k.organization_id JOIN organizations o ON o.id = k.organization_id
     WHERE k.id = $1 AND m.user_id = $2`,
    [keyId, userId],
  );
  return row;
}

/** Replaces a live key's secret (the old one stops at once); undefined if it is revoked. */
export async function rotateApiKey(db: Queryable, keyId: string, secretHash: string, last4: string, at: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET secret_hash = $2, last4 = $3, rotated_at = $4 WHERE id = $1 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`,
    [keyId, secretHash, last4, at],
  );
  return row;
}

export async function revokeApiKey(db: Queryable, keyId: string, at: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query<ApiKeyRow>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, at]);
  return row;
}

/** A live key as `/api/v1` needs it: its organization's stage, active custom model (if any) and
 *  challengers (the models that score in shadow), read with the key (which a process trusts for a
 *  second), so a promotion counts within a second in every process. */
export type LiveApiKey = ApiKeyRow & { stage: 'test' | 'live'; active_model_id: string | null; challenger_model_ids: string[] };

/** The live key whose secret hashes to `secretHash` (one indexed lookup per request). */
export async function findLiveApiKey(db: Queryable, secretHash: string): Promise<LiveApiKey | undefined> {
  const [row] = await db.query<LiveApiKey>(
    `SELECT ${K_KEY_COLUMNS}, o.stage, cm.id AS active_model_id,
            ARRAY(SELECT c.id FROM custom_models c WHERE c.organization_id = k.organization_id AND c.challenger ORDER BY c.id) AS challenger_model_ids
     FROM api_keys k JOIN organizations o ON o.id = k.organization_id
     LEFT JOIN custom_models cm ON cm.organization_id = k.organization_id AND cm.active
     WHERE k.secret_hash = $1 AND k.revoked_at IS NULL`,
    [secretHash],
  );
  return row;
}

/** Adds `requests` uses of a key on `day` (UTC date) and moves its last use forward. */
export async function recordApiKeyUse(db: Queryable, keyId: string, day: string, requests: number, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO api_key_usage (key_id, day, requests, last_used_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (key_id, day) DO UPDATE SET requests = api_key_usage.requests + EXCLUDED.requests, last_used_at = GREATEST(api_key_usage.last_used_at, EXCLUDED.last_used_at)`,
    [keyId, day, requests, at],
  );
  await db.query('UPDATE api_keys SET last_used_at = GREATEST(COALESCE(last_used_at, $2), $2) WHERE id = $1', [keyId, at]);
}

export interface UsageRow {
  key_id: string;
  key_name: string;
  day: string;
  requests: number;
  last_used_at: Date;
}

/** Daily use of an organization's keys since `since` (a UTC date), newest day first. */
export async function usageOf(db: Queryable, orgId: string, since: string): Promise<UsageRow[]> {
  return db.query<UsageRow>(
    `SELECT u.key_id, k.name AS key_name, to_char(u.day, 'YYYY-MM-DD') AS day, u.requests, u.last_used_at
     FROM api_key_usage u JOIN api_keys k ON k.id = u.key_id
     WHERE k.organization_id = $1 AND u.day >= $2::date ORDER BY u.day DESC, k.name, u.key_id`,
    [orgId, since],
  );
}
