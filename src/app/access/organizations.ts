// Organizations and their API keys as use cases (docs/operating.md): create one (the caller becomes
// its owner), list mine, read one with its members, list its keys, create, rotate and revoke a key,
// list its datasets, and read its keys' daily usage. Each answers in the contract's shape
// (contract/organizations.ts: dates as ISO text, a key never with its hash, its secret only when made
// or rotated); the routes (http/routes/organizations.ts) only translate HTTP to these and back.
//
// Membership is checked before anything of the organization is read, and every read is scoped to
// the organization in the data layer. Another organization's organization, keys and usage are
// `not_found`, never `forbidden`: an outsider cannot even learn that an id exists. Managing keys is
// for owners (an analyst is `forbidden`: roles.ts, `manageKeys`). Keys are issued, rotated and revoked by `Accounts`
// (accounts.ts), which holds the secret hasher and forgets keys it trusted.

import type { Db, Queryable } from '../../storage/db.ts';
import {
  apiKeyForMember,
  apiKeysOf,
  createOrganization as insertOrganization,
  createOrganizationOwnedBy,
  organizationsOf,
  upsertUser,
  usageOf,
  usersWithEmail,
  type ApiKeyRow,
  type OrganizationRow,
  type UsageRow,
} from '../../storage/accounts-store.ts';
import { datasetsOfOrganization } from '../../storage/datasets.ts';
import type {
  ApiKey,
  ApiKeyList,
  ApiKeyWithSecret,
  Organization,
  OrganizationDatasets,
  OrganizationList,
  OrganizationWithMembers,
  Usage,
} from '../../contract/organizations.ts';
import { datasetView } from '../datasets/datasets.ts';
import { publicKey, type Accounts } from './accounts.ts';
import { AppError } from '../errors.ts';
import { memberOrganization } from './ownership.ts';
import { randomId } from './secrets.ts';
import { memberView } from './members.ts';
import { requireCapability } from './roles.ts';
import { organizationData } from '../../storage/organization-data.ts';

/** How many days of key usage are reported (today included). */
export const USAGE_DAYS = 30;

/** What managing keys needs of the accounts: issuing, rotating and revoking (accounts.ts). */
export type KeyIssuer = Pick<Accounts, 'createKey' | 'rotateKey' | 'revokeKey'>;

/** An organization as answered: with the user's role in it. */
function organizationView(o: OrganizationRow): Organization {
  return { id: o.id, name: o.name, stage: o.stage, role: o.role, created_at: o.created_at.toISOString() };
}

/** A key as answered when it is made or rotated: with its secret, this once. */
function keyWithSecret({ key, secret }: { key: ApiKeyRow; secret: string }): ApiKeyWithSecret {
  return { ...publicKey(key), secret };
}

/** The organizations the user belongs to, with their role in each. */
export async function myOrganizations(db: Queryable, userId: string): Promise<OrganizationList> {
  return { organizations: (await organizationsOf(db, userId)).map(organizationView) };
}

/** A new organization owned by the user. */
export async function createOrganization(db: Db, userId: string, o: { name: string; stage: 'test' | 'live' }): Promise<Organization> {
  return organizationView(await insertOrganization(db, { id: randomId('org'), name: o.name, stage: o.stage, ownerId: userId }));
}

/** Who made an organization from the command line: a user no identity provider can sign in as
 *  (providers' subjects never contain a colon prefix like this), never a member of anything. */
export const COMMAND_LINE_USER = { id: 'operator:command-line', email: null, name: 'command line (npm run org:create)', avatar_url: null } as const;

export interface OperatorOrganization {
  organization: Omit<OrganizationRow, 'role'>;
  key: ApiKeyRow;
  /** The API key's secret: shown once, never stored. */
  secret: string;
  /** The owner named by e-mail: a user who had signed in with it, or invited (becomes owner at
   *  their first sign-in with that e-mail); null when none was named. */
  owner: { email: string; status: 'member' | 'invited' } | null;
}

/** An organization and its first API key, made by an operator's script (`npm run org:create`)
 *  rather than a signed-in user: owned by the users who signed in with `ownerEmail`, or by the
 *  first who does, or (without it) by nobody yet: the key alone uses it. */
export async function createOrganizationFromCommandLine(
  db: Db,
  keys: KeyIssuer,
  o: { name: string; stage: 'test' | 'live'; ownerEmail?: string | undefined; keyName?: string },
): Promise<OperatorOrganization> {
  const operator = await upsertUser(db, COMMAND_LINE_USER);
  const owners = o.ownerEmail ? await usersWithEmail(db, o.ownerEmail) : [];
  const organization = await createOrganizationOwnedBy(db, {
    id: randomId('org'),
    name: o.name,
    stage: o.stage,
    createdBy: operator.id,
    ownerIds: owners.map((u) => u.id),
    invitedEmail: o.ownerEmail && owners.length === 0 ? o.ownerEmail : undefined,
  });
  const { key, secret } = await keys.createKey(organization.id, organization.stage, o.keyName ?? 'first key (command line)', operator.id);
  return { organization, key, secret, owner: o.ownerEmail ? { email: o.ownerEmail, status: owners.length > 0 ? 'member' : 'invited' } : null };
}

/** One organization the user belongs to, with its members; `not_found` otherwise. */
export async function organizationWithMembers(db: Db, orgId: string, userId: string): Promise<OrganizationWithMembers> {
  const organization = await memberOrganization(db, orgId, userId);
  return { ...organizationView(organization), members: (await organizationData(db, organization.id).members.all()).map(memberView) };
}

/** The keys of an organization the user belongs to (any role), masked; `not_found` otherwise. */
export async function apiKeysOfOrganization(db: Queryable, orgId: string, userId: string): Promise<ApiKeyList> {
  const organization = await memberOrganization(db, orgId, userId);
  return { api_keys: (await apiKeysOf(db, organization.id)).map(publicKey) };
}

/** A new key for an organization the user owns, with the secret, which is shown once. */
export async function createApiKey(db: Queryable, keys: KeyIssuer, orgId: string, userId: string, name: string): Promise<ApiKeyWithSecret> {
  const organization = await memberOrganization(db, orgId, userId);
  requireCapability(organization.role, 'manageKeys', organization.name);
  return keyWithSecret(await keys.createKey(organization.id, organization.stage, name, userId));
}

/** A new secret for a key of an organization the user owns (the old one stops at once);
 *  `conflict` if the key is revoked. */
export async function rotateApiKey(db: Queryable, keys: KeyIssuer, keyId: string, userId: string): Promise<ApiKeyWithSecret> {
  const key = await ownKey(db, keyId, userId);
  const rotated = await keys.rotateKey(key);
  if (!rotated)
    throw new AppError('conflict', `API key ${key.id} is revoked and cannot be rotated.`, 'Create a new key with POST /api/organizations/{id}/api-keys.');
  return keyWithSecret(rotated);
}

/** Turns a key of an organization the user owns off for good. */
export async function revokeApiKey(db: Queryable, keys: KeyIssuer, keyId: string, userId: string): Promise<ApiKey> {
  return publicKey(await keys.revokeKey(await ownKey(db, keyId, userId)));
}

/** The datasets an organization the user belongs to owns, newest first (at most 500). */
export async function datasetsOfMyOrganization(db: Queryable, orgId: string, userId: string): Promise<OrganizationDatasets> {
  const organization = await memberOrganization(db, orgId, userId);
  return { datasets: (await datasetsOfOrganization(db, organization.id)).map(datasetView) };
}

/** One key's requests on one UTC day, as answered. */
function dayView(d: UsageRow): Usage['daily'][number] {
  return { day: d.day, key_id: d.key_id, key_name: d.key_name, requests: d.requests, last_used_at: d.last_used_at.toISOString() };
}

/** Requests per key and UTC day over the last USAGE_DAYS days of an organization the user belongs
 *  to, after writing the uses counted so far (they are written within a second): from `since`, the
 *  first UTC day counted (YYYY-MM-DD), every key of the organization with its requests over the
 *  period, and the requests per key and day. */
export async function usageOfOrganization(db: Queryable, accounts: Pick<Accounts, 'flushUse'>, orgId: string, userId: string, now?: number): Promise<Usage> {
  const organization = await memberOrganization(db, orgId, userId);
  await accounts.flushUse();
  const since = new Date((now ?? Date.now()) - (USAGE_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
  const [keys, daily] = await Promise.all([apiKeysOf(db, organization.id), usageOf(db, organization.id, since)]);
  const totals = new Map<string, number>();
  for (const d of daily) totals.set(d.key_id, (totals.get(d.key_id) ?? 0) + d.requests);
  return {
    organization_id: organization.id,
    since,
    days: USAGE_DAYS,
    keys: keys.map((key) => ({ ...publicKey(key), requests: totals.get(key.id) ?? 0 })),
    daily: daily.map(dayView),
  };
}

/** A key of an organization the user belongs to (`not_found` otherwise) and owns (`forbidden`). */
async function ownKey(db: Queryable, keyId: string, userId: string) {
  const key = await apiKeyForMember(db, keyId, userId);
  if (!key)
    throw new AppError(
      'not_found',
      `No API key ${keyId} in an organization you belong to.`,
      "List an organization's keys with GET /api/organizations/{id}/api-keys.",
    );
  requireCapability(key.role, 'manageKeys', key.organization_name);
  return key;
}
