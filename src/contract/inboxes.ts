// What managing inboxes answers and accepts beyond making them (contract/cases.ts): a change of an
// inbox, its managers' figures, and an escalation's request. The one definition of each shape, read
// by the use cases, the routes (validation and the OpenAPI reference) and the dashboard.

import { z } from 'zod';
import { AutoAssign, InboxRequest } from './cases.ts';

export const InboxChange = z
  .object({
    name: InboxRequest.shape.name.optional(),
    members: z.array(z.string().min(1).max(200)).max(200).optional().describe("User ids of the organization's members who work this inbox"),
    route: z.string().trim().min(1).max(4_000).nullable().optional().describe('A CEL expression over the decision; null: a default inbox'),
    on_block: z.boolean().optional(),
    sla_hours: z
      .number()
      .positive()
      .max(24 * 365)
      .optional()
      .describe('Hours from opening to due, for cases opened (or escalated here) from now on'),
    escalation_inbox_id: z.string().min(1).max(100).nullable().optional(),
    auto_assign: AutoAssign.nullable().optional(),
    position: z.number().int().min(0).max(10_000).optional().describe('Its place in routing order, 0 first; the others keep their order around it'),
  })
  .strict()
  .describe('Only the settings sent change; an empty object changes nothing');
export type InboxChange = z.infer<typeof InboxChange>;

export const InboxStats = z.object({
  inbox_id: z.string(),
  at: z.string().describe('When the figures were taken'),
  open: z.number().int(),
  in_progress: z.number().int(),
  snoozed: z.number().int(),
  overdue: z.number().int().describe('Not closed and past their due time'),
  closed_7d: z.number().int().describe('Closed in the last 7 days (a case merged into another by an escalation is not counted)'),
  closed_30d: z.number().int(),
  median_time_to_close_hours: z.number().nullable().describe('Of the cases closed in the last 30 days, from opening to closing; null when none was'),
  analysts: z
    .array(
      z.object({
        user_id: z.string(),
        open: z.number().int().describe('Open or in progress: what the auto-assignment cap counts'),
        snoozed: z.number().int(),
        closed_30d: z.number().int(),
      }),
    )
    .describe('Per assignee with a case open, snoozed or closed in the last 30 days'),
});
export type InboxStats = z.infer<typeof InboxStats>;

export const EscalateRequest = z.object({ reason: z.string().trim().min(1).max(2_000).describe('Why, on the timeline') }).strict();
export type EscalateRequest = z.infer<typeof EscalateRequest>;
