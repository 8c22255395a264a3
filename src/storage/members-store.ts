// An organization's members and pending invitations (migrations/004_accounts.sql, 015 and 022),
// bound to the organization by its scope (organization-data.ts): listing them, inviting by e-mail,
// withdrawing an invitation, changing a member's role, removing a member, and the audit of every
// such change (`membership_audit`). Each change runs in one transaction that first locks the
// organization's row, so two changes of one organization's members are made one after the other:
// two owners demoting each other at the same moment cannot both succeed and leave it with none.
// What joining at sign-in writes (an invitation claimed, across organizations) is accounts-store.ts's.

import type { Queryable } from './db.ts';
import type { OrganizationScope } from './organization-scope.ts';
import type { MEMBER_ACTIONS, Role } from '../contract/organizations.ts';

export interface MemberRow {
  user_id: string;
  email: string | null;
  name: string | null;
  role: Role;
  joined_at: Date;
}

export interface InvitationRow {
  email: string;
  role: Role;
  invited_at: Date;
  invited_by: string | null;
}

export interface MemberChangeRow {
  id: number;
  at: Date;
  by: string;
  by_email: string | null;
  action: (typeof MEMBER_ACTIONS)[number];
  user_id: string | null;
  email: string | null;
  role: Role;
  previous_role: Role | null;
}

const MEMBER = `u.id AS user_id, u.email, u.name, m.role, m.created_at AS joined_at`;
const INVITATION = `email, role, created_at AS invited_at, invited_by`;

/** One membership change, in the writing transaction. */
async function audit(
  tx: Queryable,
  scope: OrganizationScope,
  e: { by: string; action: MemberChangeRow['action']; userId: string | null; email: string | null; role: Role; previousRole?: Role },
): Promise<void> {
  await tx.query(`INSERT INTO membership_audit (organization_id, by, action, user_id, email, role, previous_role) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    scope.organizationId,
    e.by,
    e.action,
    e.userId,
    e.email,
    e.role,
    e.previousRole ?? null,
  ]);
}

/** Holds the organization's row until the transaction ends: its membership changes go one at a time. */
async function lockOrganization(tx: Queryable, scope: OrganizationScope): Promise<void> {
  await tx.query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [scope.organizationId]);
}

async function owners(tx: Queryable, scope: OrganizationScope): Promise<number> {
  const [row] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1 AND role = 'owner'`, [
    scope.organizationId,
  ]);
  return row!.n;
}

async function member(tx: Queryable, scope: OrganizationScope, userId: string): Promise<MemberRow | undefined> {
  const [row] = await tx.query<MemberRow>(
    `SELECT ${MEMBER} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND m.user_id = $2`,
    [scope.organizationId, userId],
  );
  return row;
}

/** The organization's members, oldest first. */
export function listMembers(scope: OrganizationScope): Promise<MemberRow[]> {
  return scope.db.query<MemberRow>(
    `SELECT ${MEMBER} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 ORDER BY m.created_at, u.id`,
    [scope.organizationId],
  );
}

/** One member; undefined when the user is not a member of the organization. */
export function getMember(scope: OrganizationScope, userId: string): Promise<MemberRow | undefined> {
  return member(scope.db, scope, userId);
}

/** The organization's pending invitations, oldest first. */
export function listInvitations(scope: OrganizationScope): Promise<InvitationRow[]> {
  return scope.db.query<InvitationRow>(`SELECT ${INVITATION} FROM organization_invitations WHERE organization_id = $1 ORDER BY created_at, email`, [
    scope.organizationId,
  ]);
}

/** Why an invitation was not made: the e-mail is a member's (their user id) or invited already, or
 *  the organization has `max` invitations pending. */
export type InviteRefusal = { member: string } | { invited: InvitationRow } | { full: number };

/** Invites an e-mail (stored lower case) with a role, unless a member signed in with it (compared
 *  without case), it is invited already, or `max` invitations are pending. */
export async function invite(
  scope: OrganizationScope,
  i: { email: string; role: Role; by: string; max: number },
): Promise<{ invitation: InvitationRow } | InviteRefusal> {
  const email = i.email.toLowerCase();
  return scope.db.transaction(async (tx) => {
    await lockOrganization(tx, scope);
    const [taken] = await tx.query<{ user_id: string }>(
      `SELECT m.user_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND lower(u.email) = $2 ORDER BY m.created_at LIMIT 1`,
      [scope.organizationId, email],
    );
    if (taken) return { member: taken.user_id };
    const [pending] = await tx.query<InvitationRow>(`SELECT ${INVITATION} FROM organization_invitations WHERE organization_id = $1 AND email = $2`, [
      scope.organizationId,
      email,
    ]);
    if (pending) return { invited: pending };
    const [count] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM organization_invitations WHERE organization_id = $1`, [scope.organizationId]);
    if (count!.n >= i.max) return { full: i.max };
    const [invitation] = await tx.query<InvitationRow>(
      `INSERT INTO organization_invitations (organization_id, email, role, invited_by) VALUES ($1, $2, $3, $4) RETURNING ${INVITATION}`,
      [scope.organizationId, email, i.role, i.by],
    );
    await audit(tx, scope, { by: i.by, action: 'invited', userId: null, email, role: i.role });
    return { invitation: invitation! };
  });
}

/** Withdraws a pending invitation (the e-mail compared without case); undefined when there is none. */
export async function withdrawInvitation(scope: OrganizationScope, email: string, by: string): Promise<InvitationRow | undefined> {
  return scope.db.transaction(async (tx) => {
    await lockOrganization(tx, scope);
    const [gone] = await tx.query<InvitationRow>(
      `DELETE FROM organization_invitations WHERE organization_id = $1 AND email = lower($2) RETURNING ${INVITATION}`,
      [scope.organizationId, email],
    );
    if (!gone) return undefined;
    await audit(tx, scope, { by, action: 'invitation_withdrawn', userId: null, email: gone.email, role: gone.role });
    return gone;
  });
}

/** Gives a member another role; undefined when the user is not a member, `last_owner` when it would
 *  leave the organization without an owner. The same role changes nothing and is not audited. */
export async function changeRole(scope: OrganizationScope, userId: string, role: Role, by: string): Promise<MemberRow | 'last_owner' | undefined> {
  return scope.db.transaction(async (tx) => {
    await lockOrganization(tx, scope);
    const current = await member(tx, scope, userId);
    if (!current || current.role === role) return current;
    if (current.role === 'owner' && (await owners(tx, scope)) <= 1) return 'last_owner';
    await tx.query(`UPDATE memberships SET role = $3 WHERE organization_id = $1 AND user_id = $2`, [scope.organizationId, userId, role]);
    await audit(tx, scope, { by, action: 'role_changed', userId, email: current.email, role, previousRole: current.role });
    return { ...current, role };
  });
}

/** Removes a member (`left` when they remove themselves, `removed` otherwise); undefined when the
 *  user is not a member, `last_owner` when they are its only owner. */
export async function removeMember(scope: OrganizationScope, userId: string, by: string): Promise<MemberRow | 'last_owner' | undefined> {
  return scope.db.transaction(async (tx) => {
    await lockOrganization(tx, scope);
    const current = await member(tx, scope, userId);
    if (!current) return undefined;
    if (current.role === 'owner' && (await owners(tx, scope)) <= 1) return 'last_owner';
    await tx.query(`DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2`, [scope.organizationId, userId]);
    await audit(tx, scope, { by, action: by === userId ? 'left' : 'removed', userId, email: current.email, role: current.role });
    return current;
  });
}

/** A page of the organization's membership changes, newest first, after the change numbered
 *  `startingAfter` (the last of the previous page); undefined when that is not one of its changes. */
export async function memberAuditPage(
  scope: OrganizationScope,
  limit: number,
  startingAfter?: number,
): Promise<{ entries: MemberChangeRow[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [scope.organizationId];
  if (startingAfter !== undefined) {
    const [cursor] = await scope.db.query(`SELECT 1 FROM membership_audit WHERE organization_id = $1 AND id = $2`, [scope.organizationId, startingAfter]);
    if (!cursor) return undefined;
    params.push(startingAfter);
  }
  params.push(limit + 1);
  const rows = await scope.db.query<MemberChangeRow>(
    `SELECT a.id, a.at, a.by, u.email AS by_email, a.action, a.user_id, a.email, a.role, a.previous_role
     FROM membership_audit a LEFT JOIN users u ON u.id = a.by
     WHERE a.organization_id = $1 ${startingAfter === undefined ? '' : 'AND a.id < $2'}
     ORDER BY a.id DESC LIMIT $${params.length}`,
    params,
  );
  return { entries: rows.slice(0, limit), hasMore: rows.length > limit };
}
