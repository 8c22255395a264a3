// What the cases surface answers and accepts: inboxes (their routing), cases, their timelines and an
// export an auditor can check. The one definition of each shape, read by the use cases, the routes
// (validation and the OpenAPI reference) and the dashboard (`import type`).

import { z } from 'zod';
import { CASE_RESOLUTIONS, CASE_STATUSES } from '../domain/cases.ts';
import { Entity, TransactionRecord } from './transactions.ts';
import { LIST_KINDS } from '../domain/rules/lists.ts';
import { NO_NUL } from './stored-text.ts';

/** Round-robin assignment of new cases among an inbox's members, each holding at most `cap`. */
export const AutoAssign = z
  .object({
    cap: z.number().int().min(1).max(10_000).describe('The most open or in-progress cases of this inbox a member holds before the rotation skips them'),
  })
  .strict()
  .describe(
    "New cases go round the members: to whoever holds the fewest of the inbox's open cases below the cap, ties to whoever was given one longest ago; none below it: the case waits unassigned. Null: nobody is assigned by the inbox",
  );

export const InboxRequest = z
  .object({
    name: z.string().trim().min(1).max(100),
    group_by: z
      .string()
      .regex(/^(customer|merchant|field:[a-z][a-z0-9_]{0,39})$/, 'customer, merchant or field:<name> (a key field)')
      .default('customer')
      .describe("Whose decisions a case groups: `customer` (the default), `merchant`, or `field:<name>`, a key field's value"),
    route: z
      .string()
      .trim()
      .min(1)
      .max(4_000)
      .nullable()
      .default(null)
      .describe(
        'A CEL expression over the decision, as rules read it (docs/rules.md): decisions it matches come here, the first inbox in order whose route matches winning. Null: a default inbox, tried after every inbox with a route',
      ),
    on_block: z.boolean().default(false).describe('Blocked decisions open cases here too (every review does)'),
    sla_hours: z
      .number()
      .positive()
      .max(24 * 365)
      .default(24)
      .describe("Hours from a case's opening to when it is due"),
    members: z.array(z.string().min(1).max(200)).max(200).default([]).describe("User ids of the organization's members who work this inbox"),
    escalation_inbox_id: z
      .string()
      .min(1)
      .max(100)
      .nullable()
      .default(null)
      .describe("Where its cases go when escalated (POST …/cases/{case_id}/escalate): another of the organization's inboxes; null: none"),
    auto_assign: AutoAssign.nullable().default(null),
  })
  .strict();
export type InboxRequest = z.infer<typeof InboxRequest>;

export const Inbox = z.object({
  id: z.string(),
  name: z.string(),
  group_by: z.string(),
  route: z.string().nullable(),
  position: z.number().int(),
  on_block: z.boolean(),
  sla_hours: z.number(),
  members: z.array(z.string()),
  escalation_inbox_id: z.string().nullable(),
  auto_assign: z.object({ cap: z.number().int() }).nullable(),
  created_at: z.string(),
  created_by: z.string(),
});
export type Inbox = z.infer<typeof Inbox>;
export const InboxList = z.object({ data: z.array(Inbox) });
export type InboxList = z.infer<typeof InboxList>;

export const Case = z.object({
  id: z.string(),
  inbox_id: z.string(),
  entity: z.object({
    kind: z.enum(['customer', 'merchant', 'key']),
    id: z.string().describe("The customer's or merchant's id, or the key field's value"),
    field: z.string().nullable().describe('The key field, for a key value'),
  }),
  status: z.enum(CASE_STATUSES),
  resolution: z.enum(CASE_RESOLUTIONS).nullable(),
  assignee: z.string().nullable(),
  priority: z.number().describe('The expected loss of its worst decision: its score times its amount'),
  decision_count: z.number().int().describe('How many decisions it groups'),
  opened_at: z.string(),
  due_at: z.string(),
  overdue: z.boolean(),
  snoozed_until: z.string().nullable(),
  closed_at: z.string().nullable(),
  updated_at: z.string(),
});
export type Case = z.infer<typeof Case>;

export const CasePage = z.object({ data: z.array(Case), has_more: z.boolean() });
export type CasePage = z.infer<typeof CasePage>;

export const TimelineEntry = z.object({
  n: z.number().int(),
  at: z.string(),
  actor: z.string().describe('A user id, `key:<api key id>`, or `system`'),
  kind: z.string(),
  detail: z.unknown(),
  prev_hash: z.string(),
  hash: z.string().describe("SHA-256 (hex) of prev_hash, a newline, then n, at in epoch ms, actor, kind and detail's JSON text, joined by tabs"),
});

export const CaseDetail = Case.extend({
  decisions: z.array(TransactionRecord).describe('Its decisions, in the order they joined, each as its record shows it (score, reasons, evidence, ring)'),
  entity_summary: Entity.nullable().describe(
    "Its entity's totals, recent decisions and counterparties, as the entity's own page shows them (null when no transaction of it is recorded)",
  ),
  lists: z
    .array(
      z.object({
        name: z.string(),
        kind: z.enum(LIST_KINDS),
        added_at: z.string(),
        reason: z.string().nullable(),
        expires_at: z.string().nullable(),
      }),
    )
    .describe("The organization's lists its entity is on now (lists of its kind, and text lists), with when and why it was added"),
  timeline: z.array(TimelineEntry),
  chain: z
    .object({ intact: z.boolean(), broken_at: z.number().int().nullable() })
    .describe('Whether the timeline is one unbroken hash chain, and where it breaks'),
});
export type CaseDetail = z.infer<typeof CaseDetail>;

export const InboxAudit = z.object({
  data: z.array(
    z.object({
      at: z.string(),
      by: z.string(),
      action: z.enum(['created', 'changed', 'deleted']),
      detail: z.record(z.string(), z.unknown()).nullable().describe('What it was made with, or what a change set'),
    }),
  ),
});
export type InboxAudit = z.infer<typeof InboxAudit>;

export const CaseExport = z.object({
  exported_at: z.string(),
  organization_id: z.string(),
  case: CaseDetail,
});
export type CaseExport = z.infer<typeof CaseExport>;

/** `POST /api/v1/cases`: a server opens a case on one of its transactions (or adds the transaction
 *  to its entity's open case), saying why. */
export const OpenCaseRequest = z
  .object({
    transaction_id: z.string().min(1).max(200).regex(NO_NUL, 'transaction_id must not contain a NUL character'),
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .regex(NO_NUL, 'reason must not contain a NUL character')
      .describe("Why, in the case's timeline (e.g. `chargeback dispute 4471`)"),
  })
  .strict();
export type OpenCaseRequest = z.infer<typeof OpenCaseRequest>;
