// Cases on the dashboard's surface (`/api/organizations/{id}/inboxes` and `…/cases`, session and
// CSRF): members read inboxes and cases, work them and open one on a transaction; owners make
// inboxes. The use cases are
// app/cases/cases.ts's; this file reads the request, names whom it acts for and sends their answer.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { Case, CaseDetail, CaseExport, CasePage, Inbox, InboxAudit, InboxList, InboxRequest, OpenCaseRequest } from '../../contract/cases.ts';
import { EscalateRequest, InboxChange, InboxStats } from '../../contract/inboxes.ts';
import { CASE_RESOLUTIONS, CASE_STATUSES } from '../../domain/cases.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { memberCaller } from '../ownership.ts';
import { OrgParams } from '../records.ts';
import { NO_NUL } from '../../contract/stored-text.ts';

const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const CaseParams = OrgParams.extend({ case_id: z.string().min(1).max(100) });
const InboxParams = OrgParams.extend({ inbox_id: z.string().min(1).max(100) });

export function caseRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'organizations' | 'cases'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/organizations/:id/inboxes',
    {
      schema: { tags: ['cases'], summary: "The organization's inboxes, in routing order", params: OrgParams, response: { 200: InboxList, ...errors } },
    },
    async (request) => app.cases.inboxes(await memberCaller(app, request, request.params.id)),
  );

  r.post(
    '/api/organizations/:id/inboxes',
    {
      schema: {
        tags: ['cases'],
        summary: 'Make an inbox (owners)',
        description:
          "Last in routing order. A decision of `review` (and of `block` where `on_block`) goes to the first inbox whose `route` matches it, a default inbox (no route) when none does, and opens or joins the open case of its entity there (`group_by`). A route is checked as a rule's expression is (422 `invalid_rule`); `field:<name>` must be a key field (422 `validation_failed`); members must be the organization's (422 `not_a_member`); a name in use is 409 `conflict`; a member is 403 `forbidden`.",
        params: OrgParams,
        body: InboxRequest,
        response: { 201: Inbox, ...errors },
      },
    },
    async (request, reply) => {
      const inbox = await app.cases.createInbox(await memberCaller(app, request, request.params.id), request.body);
      reply.code(201);
      return inbox;
    },
  );

  r.patch(
    '/api/organizations/:id/inboxes/:inbox_id',
    {
      schema: {
        tags: ['cases'],
        summary: 'Change an inbox (owners)',
        description:
          "Only the settings sent change. Every process routes with them once answered (the live feed carries them); each change is audited. `position` moves the inbox in routing order, the others keeping theirs around it. `sla_hours` sets the due time of cases opened or escalated here from now on. `auto_assign: {cap}` gives new cases round the members (the fewest open first, ties to whoever waited longest), none above `cap`; null stops it. `escalation_inbox_id` must be another of the organization's inboxes (422 `validation_failed`). A member is 403 `forbidden`; a name in use 409 `conflict`.",
        params: InboxParams,
        body: InboxChange,
        response: { 200: Inbox, ...errors },
      },
    },
    async (request) => app.cases.changeInbox(await memberCaller(app, request, request.params.id), request.params.inbox_id, request.body),
  );

  r.delete(
    '/api/organizations/:id/inboxes/:inbox_id',
    {
      schema: {
        tags: ['cases'],
        summary: 'Delete an inbox (owners)',
        description:
          'No decision is routed to it any more; its closed cases stay readable. Refused with 409 `conflict` while it has cases not closed (close or escalate them first) or while another inbox escalates to it.',
        params: InboxParams,
        response: { 204: z.null().describe('Deleted'), ...errors },
      },
    },
    async (request, reply) => {
      await app.cases.deleteInbox(await memberCaller(app, request, request.params.id), request.params.inbox_id);
      reply.code(204);
      return null;
    },
  );

  r.get(
    '/api/organizations/:id/inboxes/:inbox_id/stats',
    {
      schema: {
        tags: ['cases'],
        summary: "An inbox's figures for its managers",
        description:
          'Cases open, in progress, snoozed and overdue now; closed in the last 7 and 30 days and the median time to close (last 30 days); per analyst, their open and closed cases.',
        params: InboxParams,
        response: { 200: InboxStats, ...errors },
      },
    },
    async (request) => app.cases.inboxStats(await memberCaller(app, request, request.params.id), request.params.inbox_id),
  );

  r.get(
    '/api/organizations/:id/inboxes/:inbox_id/audit',
    {
      schema: {
        tags: ['cases'],
        summary: "An inbox's recorded changes, oldest first",
        description: 'Who made it and with what settings, each change and what it set, and who deleted it (a deleted inbox keeps its record).',
        params: InboxParams,
        response: { 200: InboxAudit, ...errors },
      },
    },
    async (request) => app.cases.inboxAudit(await memberCaller(app, request, request.params.id), request.params.inbox_id),
  );

  r.post(
    '/api/organizations/:id/cases/:case_id/escalate',
    {
      schema: {
        tags: ['cases'],
        summary: "Escalate a case to its inbox's escalation inbox",
        description:
          "The case moves there unassigned and open, due after that inbox's SLA; its timeline says from where and why. If its entity already has an open case there, it is merged into that case (its decisions join it; it closes naming it) and the answer is that case. No escalation inbox: 422 `no_escalation_inbox`; a closed case: 409 `case_closed`.",
        params: CaseParams,
        body: EscalateRequest,
        response: { 200: CaseDetail, ...errors },
      },
    },
    async (request) => app.cases.escalate(await memberCaller(app, request, request.params.id), request.params.case_id, request.body.reason),
  );

  r.get(
    '/api/organizations/:id/cases',
    {
      schema: {
        tags: ['cases'],
        summary: "The organization's cases, the soonest due first",
        description: 'Filters combine; `limit` 1–100 (default 25); the next page starts after the last case of this one (`starting_after`).',
        params: OrgParams,
        querystring: z
          .object({
            status: z.enum(CASE_STATUSES).optional(),
            inbox_id: z.string().min(1).max(100).optional(),
            assignee: z.string().min(1).max(200).optional(),
            overdue: z.enum(['true', 'false']).optional().describe('`true`: only cases not closed and past their due time'),
            limit: z.coerce.number().int().min(1).max(100).default(25),
            starting_after: z.string().min(1).max(100).optional(),
          })
          .strict(),
        response: { 200: CasePage, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      return app.cases.list(await memberCaller(app, request, request.params.id), { ...q, overdue: q.overdue === 'true' });
    },
  );

  r.post(
    '/api/organizations/:id/cases',
    {
      schema: {
        tags: ['cases'],
        summary: 'Open a case on a transaction (or add it to the open case of its entity)',
        description:
          "From a transaction's page: what `POST /api/v1/cases` does for a server, done by a member. The case is the one a decision of the transaction would open or join (the inbox its stored decision's routing picks, else the default inbox, else the first; grouped as that inbox groups), so there is never a second open case of the entity in an inbox. 201 with the case when this opened it (a `case.opened` event), 200 when the transaction joined the open case or was in it already. The timeline names the member and the reason. An unknown transaction_id is 404 `not_found`; an organization without an inbox is 409 `no_inbox`.",
        params: OrgParams,
        body: OpenCaseRequest,
        response: { 200: Case, 201: Case, ...errors },
      },
    },
    async (request, reply) => {
      const answer = await app.cases.open(await memberCaller(app, request, request.params.id), request.body);
      reply.code(answer.opened ? 201 : 200);
      return answer.case;
    },
  );

  r.get(
    '/api/organizations/:id/cases/:case_id',
    {
      schema: {
        tags: ['cases'],
        summary: 'A case with its decisions, its timeline and whether the timeline is intact',
        params: CaseParams,
        response: { 200: CaseDetail, ...errors },
      },
    },
    async (request) => app.cases.detail(await memberCaller(app, request, request.params.id), request.params.case_id),
  );

  r.post(
    '/api/organizations/:id/cases/next',
    {
      schema: {
        tags: ['cases'],
        summary: "The caller's next case, claimed for them",
        description:
          "Their own cases first, then the unassigned ones of the inboxes they work (an inbox naming no members is everyone's), the soonest due first, then the most urgent; snoozed cases whose time has come are woken first. 404 `not_found` when none is waiting.",
        params: OrgParams,
        response: { 200: CaseDetail, ...errors },
      },
    },
    async (request) => app.cases.next(await memberCaller(app, request, request.params.id)),
  );

  r.post(
    '/api/organizations/:id/cases/:case_id/status',
    {
      schema: {
        tags: ['cases'],
        summary: 'Open, start, snooze, close or reopen a case',
        description:
          '`snoozed` needs `until` (it wakes by itself then); `closed` needs `resolution`. Closing as `fraud` or `legitimate` records that outcome (source `review`, by the caller) on each of its decisions without one, as marking them one by one does; `inconclusive` records none. A closed case only reopens (`open`): anything else is 409 `case_closed`; reopening while another case of the entity is open in the inbox is 409 `conflict`.',
        params: CaseParams,
        body: z
          .object({
            status: z.enum(CASE_STATUSES),
            until: z.string().datetime({ offset: true }).optional(),
            resolution: z.enum(CASE_RESOLUTIONS).optional(),
          })
          .strict(),
        response: { 200: CaseDetail, ...errors },
      },
    },
    async (request) => app.cases.status(await memberCaller(app, request, request.params.id), request.params.case_id, request.body),
  );

  r.post(
    '/api/organizations/:id/cases/:case_id/assign',
    {
      schema: {
        tags: ['cases'],
        summary: 'Assign a case to a member of its inbox, or to nobody',
        description: 'A user who does not work the inbox is 422 `not_a_member`; a closed case is 409 `case_closed`.',
        params: CaseParams,
        body: z.object({ user_id: z.string().min(1).max(200).nullable() }).strict(),
        response: { 200: CaseDetail, ...errors },
      },
    },
    async (request) => app.cases.assign(await memberCaller(app, request, request.params.id), request.params.case_id, request.body.user_id),
  );

  r.post(
    '/api/organizations/:id/cases/:case_id/claim',
    {
      schema: { tags: ['cases'], summary: 'The caller takes a case', params: CaseParams, response: { 200: CaseDetail, ...errors } },
    },
    async (request) => app.cases.claim(await memberCaller(app, request, request.params.id), request.params.case_id),
  );

  r.post(
    '/api/organizations/:id/cases/:case_id/notes',
    {
      schema: {
        tags: ['cases'],
        summary: "A note on a case's timeline",
        params: CaseParams,
        body: z.object({ text: z.string().trim().min(1).max(10_000).regex(NO_NUL, 'text must not contain a NUL character') }).strict(),
        response: { 200: CaseDetail, ...errors },
      },
    },
    async (request) => app.cases.note(await memberCaller(app, request, request.params.id), request.params.case_id, request.body.text),
  );

  r.get(
    '/api/organizations/:id/cases/:case_id/export',
    {
      schema: {
        tags: ['cases'],
        summary: 'A case as one JSON document, its hash chain checked',
        description:
          "Everything the case's page shows, with each timeline entry's `prev_hash` and `hash` and `chain.intact`: an auditor recomputes each hash as SHA-256 of the previous hash, a newline, and `n`, `at` in epoch ms, `actor`, `kind` and `detail`'s JSON text joined by tabs.",
        params: CaseParams,
        response: { 200: CaseExport, ...errors },
      },
    },
    async (request) => app.cases.export(await memberCaller(app, request, request.params.id), request.params.case_id),
  );
}
