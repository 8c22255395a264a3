// The decision log and outcomes of an organization, on both surfaces: an API key reads, lists and
// reports on its own organization's transactions (`/api/v1/transactions...`, `/api/v1/outcomes`); a
// member does the same from the dashboard (`/api/organizations/{id}/transactions...`, session and
// CSRF). Both listings are one: the same filters, cursor paging and answer (newest first, or oldest
// first), so a server can read the review queue the dashboard shows. Every read goes through the
// organization's `OrganizationData` (src/storage/organization-data.ts), bound to the organization the key
// or the membership names, so another organization's transaction is simply not found (404).
// The use cases are app/decisions/decisions.ts's and app/decisions/performance.ts's, and they answer
// in the contract's shapes; this file reads the request, names whom it acts for
// (app/access/organization-caller.ts) and sends their answer.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App, KeySurface } from '../../app/app.ts';
import { OUTCOME_SOURCES, type OutcomeReport } from '../../app/decisions/outcomes.ts';
import { ENTITY_RECENT } from '../../app/decisions/decisions.ts';
import { OrganizationCaller } from '../../app/access/organization-caller.ts';
import { MIN_LABELLED } from '../../app/decisions/performance.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { Performance } from '../../contract/performance.ts';
import { BulkResult, Entity, OutcomeLabel, TransactionPage, TransactionRecord } from '../../contract/transactions.ts';
import { memberCaller } from '../ownership.ts';
import { NO_NUL } from '../../contract/stored-text.ts';
import { FIELD_NAME, MAX_FIELD_TEXT } from '../../domain/fields.ts';

/** Most outcomes in one bulk request. */
export const MAX_BULK_OUTCOMES = 1000;

const Iso = (what: string) => z.iso.datetime({ offset: true, error: `${what} must be an ISO 8601 date and time, e.g. 2026-11-23T10:15:00Z` });

const OutcomeBody = z
  .object({
    outcome: OutcomeLabel.describe('`fraud` or `legit`'),
    source: z.enum(OUTCOME_SOURCES).default('other').describe('How the outcome was learned'),
    reported_at: Iso('reported_at').optional().describe('When it was known (default now); not in the future, not before the transaction'),
  })
  .strict();

const BulkOutcomes = z
  .object({
    outcomes: z
      .array(OutcomeBody.extend({ transaction_id: z.string().min(1).max(200).regex(NO_NUL, 'transaction_id must not contain a NUL character') }).strict())
      .min(1, 'send at least one outcome')
      .max(MAX_BULK_OUTCOMES, `at most ${MAX_BULK_OUTCOMES} outcomes per request`),
  })
  .strict();

const TxParams = z.object({ transaction_id: z.string().min(1).max(200) });
const OrgTxParams = z.object({ id: z.string().min(1).max(100), transaction_id: z.string().min(1).max(200) });

const FIELD_FILTER = new RegExp(`^field\\.${FIELD_NAME.source.slice(1, -1)}$`);
const ListQuery = z
  .object({
    decision: z.enum(['approve', 'review', 'block']).optional(),
    risk_band: z.enum(['low', 'medium', 'high', 'critical']).optional(),
    outcome: z.enum(['fraud', 'legit', 'none']).optional().describe('`none`: no outcome reported yet'),
    customer_id: z.string().min(1).max(200).optional(),
    merchant_id: z.string().min(1).max(200).optional(),
    rule_id: z.string().min(1).max(100).optional().describe('Transactions this rule matched (applied or not, shadow included)'),
    from: Iso('from').optional().describe('Transactions at or after this time'),
    to: Iso('to').optional().describe('Transactions before this time'),
    order: z.enum(['newest', 'oldest']).default('newest').describe('`oldest` first serves a review queue'),
    limit: z.coerce.number().int().min(1).max(100).default(25),
    starting_after: z.string().min(1).max(200).optional().describe('The last transaction_id of the previous page'),
  })
  // `field.<name>=<value>`: transactions that carried this value of a key field (any other name is
  // refused, as a strict object would).
  .catchall(z.string().min(1).max(MAX_FIELD_TEXT))
  .superRefine((q, ctx) => {
    for (const name of Object.keys(q)) {
      if (KNOWN_QUERY.has(name) || FIELD_FILTER.test(name)) continue;
      ctx.addIssue({ code: 'custom', path: [name], message: `unknown query parameter ${name} (a key field is filtered on as field.<name>)` });
    }
  });

const LIST_DESCRIPTION =
  "Filters combine; `field.<name>=<value>` keeps the transactions that carried that value of one of the organization's key fields (another name: 422); `limit` 1–100 (default 25); the next page starts after the last transaction_id of this one (`starting_after`), in the same `order`. Answer: `{ data, has_more }`. The review queue is `decision=review&outcome=none&order=oldest`.";

const KNOWN_QUERY = new Set(Object.keys(ListQuery.shape));

/** The `field.<name>` filters of a listing's query, by name. */
function fieldFilters(q: Record<string, unknown>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [k, v] of Object.entries(q)) if (FIELD_FILTER.test(k)) (out ??= {})[k.slice('field.'.length)] = v as string;
  return out;
}

/** A page of the listing, for whichever surface asked (one definition for both). */
async function listPage(app: Pick<App, 'decisions'>, caller: OrganizationCaller, q: z.infer<typeof ListQuery>): Promise<TransactionPage> {
  const filters = {
    decision: q.decision,
    risk_band: q.risk_band,
    outcome: q.outcome,
    customer_id: q.customer_id,
    merchant_id: q.merchant_id,
    rule_id: q.rule_id,
    from: q.from === undefined ? undefined : Date.parse(q.from),
    to: q.to === undefined ? undefined : Date.parse(q.to),
    order: q.order,
    fields: fieldFilters(q),
  };
  return app.decisions.list(caller, filters, q.limit, q.starting_after);
}

const toReport = (id: string, b: z.infer<typeof OutcomeBody>): OutcomeReport => ({
  transaction_id: id,
  outcome: b.outcome,
  source: b.source,
  reported_at: b.reported_at === undefined ? undefined : Date.parse(b.reported_at),
});

const keyErrors = { 401: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const memberErrors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };

/** The key surface's reads and reports (registered under the API-key hook, app.ts). */
export function keyTransactionRoutes(server: FastifyInstance, app: KeySurface): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/v1/transactions',
    {
      schema: {
        tags: ['decisions'],
        summary: "The key's organization's recorded transactions, newest first (or oldest first)",
        description: `The dashboard's listing (GET /api/organizations/{id}/transactions) for a server. ${LIST_DESCRIPTION}`,
        security: [{ apiKey: [] }],
        querystring: ListQuery,
        response: { 200: TransactionPage, ...keyErrors },
      },
    },
    async (request) => listPage(app, OrganizationCaller.key(request.apiKey!), request.query),
  );

  r.get(
    '/api/v1/transactions/:transaction_id',
    {
      schema: {
        tags: ['decisions'],
        summary: "A recorded transaction of the key's organization, with its decision and outcome",
        security: [{ apiKey: [] }],
        params: TxParams,
        response: { 200: TransactionRecord, ...keyErrors },
      },
    },
    async (request) => {
      return app.decisions.record(OrganizationCaller.key(request.apiKey!), request.params.transaction_id);
    },
  );

  r.post(
    '/api/v1/transactions/:transaction_id/outcome',
    {
      schema: {
        tags: ['decisions'],
        summary: 'Report the outcome of a transaction (fraud or legitimate)',
        description:
          "The label joins the organization's history at reported_at: later transactions' graph features and evidence use it from then on. An outcome can be changed; every change is kept with who made it. Answers the record.",
        security: [{ apiKey: [] }],
        params: TxParams,
        body: OutcomeBody,
        response: { 200: TransactionRecord, ...keyErrors },
      },
    },
    async (request) => app.outcomes.report(OrganizationCaller.key(request.apiKey!), toReport(request.params.transaction_id, request.body)),
  );

  r.post(
    '/api/v1/outcomes',
    {
      // A thousand outcomes with ids of up to 200 characters.
      bodyLimit: Math.max(app.config.MAX_JSON_BODY_BYTES, MAX_BULK_OUTCOMES * 400),
      schema: {
        tags: ['decisions'],
        summary: `Report up to ${MAX_BULK_OUTCOMES} outcomes at once`,
        description:
          'Applied in order; each gets a status: `applied`, `not_found` (no such transaction in the organization) or `invalid` (reported_at in the future or before the transaction; nothing changed for it).',
        security: [{ apiKey: [] }],
        body: BulkOutcomes,
        response: { 200: BulkResult, ...keyErrors },
      },
    },
    async (request) => {
      const reports = request.body.outcomes.map((o) => toReport(o.transaction_id, o));
      return app.outcomes.reportInBulk(OrganizationCaller.key(request.apiKey!), reports);
    },
  );
}

/** The dashboard's: a member of the organization, by session. */
export function memberTransactionRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'organizations' | 'decisions' | 'outcomes'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/organizations/:id/transactions',
    {
      schema: {
        tags: ['decisions'],
        summary: "The organization's recorded transactions, newest first (or oldest first)",
        description: LIST_DESCRIPTION,
        params: z.object({ id: z.string().min(1).max(100) }),
        querystring: ListQuery,
        response: { 200: TransactionPage, ...memberErrors },
      },
    },
    async (request) => listPage(app, await memberCaller(app, request, request.params.id), request.query),
  );

  r.get(
    '/api/organizations/:id/performance',
    {
      schema: {
        tags: ['decisions'],
        summary: "How the model does on the organization's own traffic, per ISO week",
        description: `The last \`weeks\` ISO weeks (default 12), oldest first: volume, review and block rates and score quantiles of the scored transactions; on those with a reported outcome, each mode's precision and recall, ROC AUC and average precision (null with fewer than ${MIN_LABELLED} labelled, or without both classes).`,
        params: z.object({ id: z.string().min(1).max(100) }),
        querystring: z.object({ weeks: z.coerce.number().int().min(1).max(104).default(12) }).strict(),
        response: { 200: Performance, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      return app.decisions.weekly(caller, request.query.weeks);
    },
  );

  r.get(
    '/api/organizations/:id/entities/:role/:entity_id',
    {
      schema: {
        tags: ['decisions'],
        summary: 'A customer or merchant of the organization: totals, decisions and counterparties',
        description: `\`totals\`: all time (kept by the database as transactions are recorded). \`recent\`: over its latest ${ENTITY_RECENT.toLocaleString('en')} transactions, how many, since when, and how many were reviewed and blocked. \`counterparties\`: the merchants a customer paid, or the customers who paid a merchant, most transactions first, over the same transactions (at most 20). 404 when the organization has no transaction of it.`,
        params: z.object({ id: z.string().min(1).max(100), role: z.enum(['customer', 'merchant']), entity_id: z.string().min(1).max(200) }),
        response: { 200: Entity, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      return app.decisions.entity(caller, request.params.role, request.params.entity_id);
    },
  );

  r.get(
    '/api/organizations/:id/fields/:name/values/:value',
    {
      schema: {
        tags: ['decisions'],
        summary: "A value of one of the organization's key fields: totals, decisions and the customers who paid with it",
        description: `A key value's page, like a customer's (role \`key\`, \`field\` its field): \`totals\` all time, \`recent\` over its latest ${ENTITY_RECENT.toLocaleString('en')} transactions, \`counterparties\` the customers who paid with it most (at most 20). Counted from the transactions recorded while the field was a key. 404 when the field is not a key field of the organization, or no transaction carried the value.`,
        params: z.object({ id: z.string().min(1).max(100), name: z.string().regex(FIELD_NAME), value: z.string().min(1).max(MAX_FIELD_TEXT) }),
        response: { 200: Entity, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      return app.decisions.keyValue(caller, request.params.name, request.params.value);
    },
  );

  r.get(
    '/api/organizations/:id/transactions/:transaction_id',
    {
      schema: {
        tags: ['decisions'],
        summary: 'One recorded transaction with its decision, outcome and outcome history',
        params: OrgTxParams,
        response: { 200: TransactionRecord, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      return app.decisions.record(caller, request.params.transaction_id);
    },
  );

  r.post(
    '/api/organizations/:id/transactions/:transaction_id/outcome',
    {
      schema: {
        tags: ['decisions'],
        summary: 'Report the outcome of a transaction from the dashboard (CSRF)',
        params: OrgTxParams,
        body: OutcomeBody,
        response: { 200: TransactionRecord, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      return app.outcomes.report(caller, toReport(request.params.transaction_id, request.body));
    },
  );
}
