// Organizations, their members and their API keys, as the account routes answer them: mine, one
// with its members, its members with their pending invitations and the audit of both, its keys
// (masked; the secret only once, when a key is made or rotated), their daily usage, and the uploads
// it owns. The use cases (app/access/) answer with these and the routes send them; the dashboard's
// account pages read them.

import { z } from 'zod';
import { DatasetObject, type Dataset } from './datasets.ts';

/** A member's role in an organization: the one list of them (what each may do is
 *  app/access/roles.ts's). `analyst` was called `member` before teams (migrations/022_teams.sql). */
export const ROLES = ['owner', 'analyst'] as const;
export const Role = z.enum(ROLES).describe('`owner`: everything; `analyst`: cases, outcomes, lists and rules in shadow (docs/analysts.md)');
export type Role = z.infer<typeof Role>;

export const Organization = z.object({
  id: z.string(),
  name: z.string(),
  stage: z.enum(['test', 'live']),
  role: Role.describe('Your role in it'),
  created_at: z.string(),
});
export type Organization = z.infer<typeof Organization>;
export const OrganizationList = z.object({ organizations: z.array(Organization) });
export type OrganizationList = z.infer<typeof OrganizationList>;
export const Member = z.object({
  user_id: z.string().describe("The identity provider's user id"),
  email: z.string().nullable().describe('As the identity provider gave it at their last sign-in'),
  name: z.string().nullable().describe('As the identity provider gave it at their last sign-in'),
  role: Role,
  joined_at: z.string().describe('Member since'),
});
export type Member = z.infer<typeof Member>;
export const OrganizationWithMembers = Organization.extend({ members: z.array(Member) });
export type OrganizationWithMembers = z.infer<typeof OrganizationWithMembers>;

/** An invitation not claimed yet: whoever first signs in with this verified e-mail joins with the role. */
export const Invitation = z.object({
  email: z.string().describe('Lower case; compared without case at sign-in'),
  role: Role,
  invited_at: z.string(),
  invited_by: z.string().nullable().describe('A user id, or `operator:command-line` (npm run org:create); null for invitations made before teams'),
});
export type Invitation = z.infer<typeof Invitation>;
export const MemberList = z.object({ members: z.array(Member), invitations: z.array(Invitation) });
export type MemberList = z.infer<typeof MemberList>;

/** The most pending invitations an organization may have at once. */
export const MAX_INVITATIONS = 100;

export const InvitationRequest = z
  .object({
    email: z
      .email('not an e-mail address')
      .max(254, 'an e-mail address is at most 254 characters')
      .describe('Whoever first signs in with this e-mail, verified by the identity provider, joins; compared without case'),
    role: Role,
  })
  .strict();
export const RoleChange = z.object({ role: Role }).strict();

export const MEMBER_ACTIONS = ['invited', 'invitation_withdrawn', 'joined', 'role_changed', 'removed', 'left'] as const;
export const MemberChange = z.object({
  id: z.string().describe("The change's number: the next page's `starting_after`"),
  at: z.string(),
  by: z.string().describe('Who made it: a user id, or `operator:command-line` (npm run org:create)'),
  by_email: z.string().nullable().describe('Their e-mail as the identity provider last gave it (null: none, or the command line)'),
  action: z
    .enum(MEMBER_ACTIONS)
    .describe(
      '`invited`; `invitation_withdrawn`; `joined` (an invitation claimed at sign-in, or the organization created); `role_changed`; `removed` (by an owner); `left` (removed themselves)',
    ),
  user_id: z.string().nullable().describe('The member it is about (null: an invitation not claimed)'),
  email: z.string().nullable().describe("The invitation's e-mail, or the member's as last given"),
  role: Role.describe('The role after the change; for `removed` and `left`, the role they had'),
  previous_role: Role.nullable().describe('`role_changed`: the role before'),
});
export type MemberChange = z.infer<typeof MemberChange>;
/** A page of an organization's membership changes, newest first. */
export const MemberAudit = z.object({ data: z.array(MemberChange), has_more: z.boolean() });
export type MemberAudit = z.infer<typeof MemberAudit>;
export const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  last4: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof ApiKey>;
export const ApiKeyList = z.object({ api_keys: z.array(ApiKey) });
export type ApiKeyList = z.infer<typeof ApiKeyList>;
export const ApiKeyWithSecret = ApiKey.extend({ secret: z.string().describe('Shown once: store it now; the server keeps only a keyed hash') });
export type ApiKeyWithSecret = z.infer<typeof ApiKeyWithSecret>;
export const Usage = z.object({
  organization_id: z.string(),
  since: z.string(),
  days: z.number().int(),
  keys: z.array(ApiKey.extend({ requests: z.number().int() })),
  daily: z.array(z.object({ day: z.string(), key_id: z.string(), key_name: z.string(), requests: z.number().int(), last_used_at: z.string() })),
});
export type Usage = z.infer<typeof Usage>;

/** `GET /api/organizations/{id}/datasets`: its uploads, each documented as an object (DatasetObject). */
export const OrganizationDatasetObjects = z.object({ datasets: z.array(DatasetObject) });
/** What that answers: each upload as the dataset routes describe it. */
export type OrganizationDatasets = { datasets: Dataset[] };
