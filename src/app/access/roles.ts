// What each role of an organization may do, defined once: every use case that changes something of
// an organization asks `require…` here before it does, so the rule is the same wherever it is
// answered (a route never decides it, and cannot forget it: the use case it calls checks). Two roles:
// analysts work the organization's cases, outcomes, lists and rules in shadow; owners also manage
// what changes how it is scored or reached: API keys, webhooks, models, members, declared fields
// and active rules. An API key (the `/api/v1` surface) works lists and outcomes, as an analyst does.
// Reading is every member's (and every key's, where the key surface has it). docs/analysts.md has
// this table in words; test/app/members.test.ts holds the service to it over HTTP.

import { AppError } from '../errors.ts';

/** An organization's roles, as stored (migrations/022_teams.sql) and answered. */
export const ROLES = ['owner', 'analyst'] as const;
export type Role = (typeof ROLES)[number];

/** Who acts for an organization: a member with their role, or one of its API keys. */
export type Actor = Role | 'key';

/** Each capability: who has it, and what it is, as the refusal says it ("Only owners … may …"). */
const CAPABILITIES = {
  manageKeys: { who: ['owner'], what: 'create, rotate and revoke its API keys' },
  manageWebhooks: { who: ['owner'], what: 'add, change, rotate the secret of and delete its webhook endpoints' },
  manageModels: { who: ['owner'], what: 'choose its active model and challengers, roll back a promotion and train its models' },
  manageMembers: { who: ['owner'], what: 'invite members, change their roles and remove them' },
  manageFields: { who: ['owner'], what: 'declare and retire its fields' },
  manageActiveRules: { who: ['owner'], what: 'make a rule active, or change, disable or delete an active rule' },
  manageInboxes: { who: ['owner'], what: 'make, change and delete its inboxes' },
  /** Retention, a customer's export, and the proof of both (docs/operating.md, Data protection). */
  manageDataProtection: { who: ['owner'], what: "set its retention period, export a customer's data and read its erasures and their audit" },
  /** An erasure: by an owner, or by the organization's own server answering a customer's request. */
  eraseCustomers: { who: ['owner', 'key'], what: "erase a customer's data" },
  /** Cases: claim, assign, note, snooze, close (recording outcomes, as reporting them does). */
  workCases: { who: ['owner', 'analyst'], what: 'work its cases' },
  /** A case opened on a transaction (a chargeback dispute, say): by a member from its page, or by a server. */
  openCases: { who: ['owner', 'analyst', 'key'], what: 'open cases on its transactions' },
  /** Rules that decide nothing yet: draft, shadow (evaluated and recorded, never applied), disabled. */
  workRules: { who: ['owner', 'analyst'], what: 'create and change its rules in draft, shadow or disabled' },
  workLists: { who: ['owner', 'analyst', 'key'], what: 'create, fill and delete its lists' },
  reportOutcomes: { who: ['owner', 'analyst', 'key'], what: "report its transactions' outcomes" },
  /** A test event or a redelivery changes no endpoint: working an incident, not configuring. */
  testWebhooks: { who: ['owner', 'analyst'], what: 'send test events and redeliver' },
} as const satisfies Record<string, { who: readonly Actor[]; what: string }>;

export type Capability = keyof typeof CAPABILITIES;

/** Whether `actor` has `capability`. */
export function may(actor: Actor, capability: Capability): boolean {
  return (CAPABILITIES[capability].who as readonly Actor[]).includes(actor);
}

/** Every capability with who has it, for the documentation's test and the dashboard's words. */
export function capabilityTable(): { capability: Capability; who: readonly Actor[]; what: string }[] {
  return Object.entries(CAPABILITIES).map(([capability, c]) => ({ capability: capability as Capability, who: c.who, what: c.what }));
}

/** `forbidden` unless `actor` has `capability`; the fix names who can. `organization` names it in
 *  the message when the use case knows its name. */
export function requireCapability(actor: Actor, capability: Capability, organization?: string): void {
  if (!may(actor, capability)) throw refusal(actor, capability, organization);
}

/** The `forbidden` answered to `actor` for `capability`, for a refusal found after the check (a
 *  storage statement that refused under its lock what the caller may not do). */
export function refusal(actor: Actor, capability: Capability, organization?: string): AppError {
  const c = CAPABILITIES[capability];
  const who: readonly Actor[] = c.who;
  const whose = organization ? `of ${organization}` : 'of the organization';
  const you = actor === 'key' ? 'an API key may not' : `you are ${actor === 'owner' ? 'an owner' : 'an analyst'}`;
  const fix =
    actor === 'key'
      ? 'Sign in on the dashboard as a member of the organization and do it there.'
      : 'Ask one of its owners to do it, or to make you an owner (GET /api/organizations/{id}/members lists them; on the dashboard, the Account page).';
  return new AppError('forbidden', `${who.includes('analyst') ? 'Owners and analysts' : 'Only owners'} ${whose} may ${c.what}; ${you}.`, fix, {
    capability,
    role: actor,
  });
}
