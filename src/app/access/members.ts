// An organization's members as use cases (docs/analysts.md, Members): every member reads the members,
// the pending invitations and the audit of their changes; owners invite by e-mail with a role
// (claimed at the invitee's first sign-in with that verified e-mail, accounts.ts), withdraw an
// invitation, change a member's role and remove a member (roles.ts, `manageMembers`); any member may
// remove themselves (leave). The organization is never left without an owner: its last owner can
// neither be demoted nor leave (`conflict`, with how to fix it). Every read and change goes through
// the organization's members part (`organizationData(db, id).members`), bound to the organization
// the caller acts for, so another organization's member or invitation is simply not found; each
// change is audited in the same transaction that makes it (storage/members-store.ts).

import type { Db } from '../../storage/db.ts';
import type { InvitationRow, MemberChangeRow, MemberRow } from '../../storage/members-store.ts';
import { organizationData } from '../../storage/organization-data.ts';
import { MAX_INVITATIONS, type Invitation, type Member, type MemberAudit, type MemberList, type Role } from '../../contract/organizations.ts';
import { AppError } from '../errors.ts';
import type { OrganizationCaller } from './organization-caller.ts';
import { requireCapability } from './roles.ts';

export interface MembersDeps {
  db: Db;
}

/** A member as answered: who, with their role and when they joined. */
export function memberView(m: MemberRow): Member {
  return { user_id: m.user_id, email: m.email, name: m.name, role: m.role, joined_at: m.joined_at.toISOString() };
}

function invitationView(i: InvitationRow): Invitation {
  return { email: i.email, role: i.role, invited_at: i.invited_at.toISOString(), invited_by: i.invited_by };
}

function changeView(c: MemberChangeRow): MemberAudit['data'][number] {
  return {
    id: String(c.id),
    at: c.at.toISOString(),
    by: c.by,
    by_email: c.by_email,
    action: c.action,
    user_id: c.user_id,
    email: c.email,
    role: c.role,
    previous_role: c.previous_role,
  };
}

const members = (deps: MembersDeps, caller: OrganizationCaller) => organizationData(deps.db, caller.organizationId).members;

const noMember = (userId: string) =>
  new AppError(
    'not_found',
    `No member ${userId} in this organization.`,
    "Check the user id: GET /api/organizations/{id}/members lists the organization's members.",
  );

/** Why the last owner cannot go: the organization would have nobody to manage it. */
const lastOwner = (caller: OrganizationCaller, userId: string, what: string) =>
  new AppError(
    'conflict',
    `${userId === caller.by ? 'You are' : `${userId} is`} the only owner of the organization: it would be left with none.`,
    `Make another member an owner first (PATCH /api/organizations/{id}/members/{user_id} with {"role": "owner"}; on the dashboard, the Account page), then ${what}.`,
  );

/** The members, oldest first, and the invitations not claimed yet; for every member. */
export async function memberList(deps: MembersDeps, caller: OrganizationCaller): Promise<MemberList> {
  const part = members(deps, caller);
  const [all, invitations] = await Promise.all([part.all(), part.invitations()]);
  return { members: all.map(memberView), invitations: invitations.map(invitationView) };
}

/** Invites an e-mail with a role (owners): whoever first signs in with it, verified, joins. An
 *  e-mail a member signed in with, or one invited already, is `conflict`. */
export async function inviteMember(deps: MembersDeps, caller: OrganizationCaller, body: { email: string; role: Role }): Promise<Invitation> {
  requireCapability(caller.role, 'manageMembers');
  const made = await members(deps, caller).invite({ email: body.email, role: body.role, by: caller.by, max: MAX_INVITATIONS });
  if ('member' in made)
    throw new AppError(
      'conflict',
      `${body.email} is a member of the organization already (user ${made.member}).`,
      `Change their role instead: PATCH /api/organizations/{id}/members/${made.member}.`,
      { user_id: made.member },
    );
  if ('invited' in made)
    throw new AppError(
      'conflict',
      `${made.invited.email} is invited already, as ${made.invited.role}.`,
      'Wait for them to sign in, or withdraw the invitation (DELETE /api/organizations/{id}/invitations/{email}) and invite them again with another role.',
    );
  if ('full' in made)
    throw new AppError(
      'limit_reached',
      `The organization has ${made.full} invitations waiting, the most it may have.`,
      'Withdraw invitations that will not be claimed, then invite again.',
    );
  return invitationView(made.invitation);
}

/** Withdraws a pending invitation (owners); `not_found` when the e-mail has none. */
export async function withdrawInvitation(deps: MembersDeps, caller: OrganizationCaller, email: string): Promise<void> {
  requireCapability(caller.role, 'manageMembers');
  if (!(await members(deps, caller).withdraw(email, caller.by)))
    throw new AppError(
      'not_found',
      `No invitation for ${email} is waiting in this organization.`,
      'GET /api/organizations/{id}/members lists the invitations waiting; one claimed at sign-in is a member now.',
    );
}

/** Gives a member another role (owners); the last owner cannot be made an analyst. */
export async function changeMemberRole(deps: MembersDeps, caller: OrganizationCaller, userId: string, role: Role): Promise<Member> {
  requireCapability(caller.role, 'manageMembers');
  const changed = await members(deps, caller).changeRole(userId, role, caller.by);
  if (changed === undefined) throw noMember(userId);
  if (changed === 'last_owner') throw lastOwner(caller, userId, 'change this role');
  return memberView(changed);
}

/** Removes a member (owners), or the caller themselves (any member: leaving); never the last owner. */
export async function removeMember(deps: MembersDeps, caller: OrganizationCaller, userId: string): Promise<void> {
  const leaving = userId === caller.by;
  if (!leaving) requireCapability(caller.role, 'manageMembers');
  const removed = await members(deps, caller).remove(userId, caller.by);
  if (removed === undefined) throw noMember(userId);
  if (removed === 'last_owner') throw lastOwner(caller, userId, leaving ? 'leave' : 'remove them');
}

/** A page of the organization's membership changes, newest first; for every member. */
export async function memberAudit(
  deps: MembersDeps,
  caller: OrganizationCaller,
  q: { limit: number; startingAfter?: string | undefined },
): Promise<MemberAudit> {
  const page = await members(deps, caller).auditPage(q.limit, q.startingAfter === undefined ? undefined : Number(q.startingAfter));
  if (!page)
    throw new AppError(
      'not_found',
      `starting_after names no change ${q.startingAfter} of this organization's members.`,
      'Pass the id of the last change of the previous page.',
    );
  return { data: page.entries.map(changeView), has_more: page.hasMore };
}
