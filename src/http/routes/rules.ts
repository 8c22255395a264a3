// Rules and lists on both surfaces: a member manages an organization's rules and lists from the
// dashboard (`/api/organizations/{id}/rules...`, `/api/organizations/{id}/lists...`, session and
// CSRF; active rules are its owners': app/access/roles.ts); an API key adds and removes list
// values (`/api/v1/lists/{name}/items`), so a customer's server can block a customer after a
// chargeback. The use cases are app/policy/rules.ts's and
// app/policy/lists.ts's; this file reads the request, names whom it acts for and sends their answer.
// The schemas here validate the requests; what the routes answer is src/contract/rules.ts's, as the
// use cases give it.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App, KeySurface } from '../../app/app.ts';
import { OrganizationCaller } from '../../app/access/organization-caller.ts';
import { MAX_VALUES_PER_REQUEST } from '../../app/policy/lists.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { Job } from '../../contract/jobs.ts';
import {
  AddResult,
  CheckResult,
  List,
  ListAudit,
  ListIndex,
  ListName,
  ListPage,
  RemoveResult,
  Rule,
  RuleHistory,
  RuleList,
  RuleStatus,
  RuleVersions,
} from '../../contract/rules.ts';
import { LIST_KINDS, MAX_VALUE_CHARS } from '../../domain/rules/lists.ts';
import { MAX_EXPRESSION_CHARS, RULE_ACTIONS } from '../../domain/rules/expression.ts';
import { memberCaller } from '../ownership.ts';
import { requireUser } from '../caller.ts';
import { OrgParams } from '../records.ts';
import { NO_NUL, storedText } from '../../contract/stored-text.ts';

const Iso = (what: string) => z.iso.datetime({ offset: true, error: `${what} must be an ISO 8601 date and time, e.g. 2026-11-23T10:15:00Z` });

const Values = z
  .array(z.string().max(MAX_VALUE_CHARS, `a value is at most ${MAX_VALUE_CHARS} characters`).regex(NO_NUL, 'a value must not contain a NUL character'))
  .min(1, 'send at least one value')
  .max(MAX_VALUES_PER_REQUEST, `at most ${MAX_VALUES_PER_REQUEST.toLocaleString('en')} values per request`);
const AddItems = z
  .object({
    values: Values.describe('Compared exactly after trimming; a value already on the list starts a new stay (its reason and expiry replaced)'),
    reason: storedText('reason', 500).optional(),
    expires_at: Iso('expires_at').optional().describe('When the values leave the list by themselves (in the future)'),
  })
  .strict();
const RemoveItems = z.object({ values: Values }).strict();

// Length, emptiness and everything else about the text are the checker's to refuse (422
// invalid_rule, with where and why); the request's body limit bounds what arrives at all.
const Expression = z
  .string()
  .describe(
    `CEL, at most ${MAX_EXPRESSION_CHARS.toLocaleString('en')} characters, e.g. \`amount > 1000.0 && customer.is_new\` or \`in_list("blocked_customers", customer_id)\``,
  );
const RuleName = storedText('name', 100);
const CreateRule = z
  .object({
    name: RuleName,
    expression: Expression,
    action: z.enum(RULE_ACTIONS),
    status: RuleStatus.default('draft'),
    description: storedText('description', 1000).optional(),
  })
  .strict();
const ChangeRule = z
  .object({
    name: RuleName.optional(),
    expression: Expression.optional(),
    action: z.enum(RULE_ACTIONS).optional(),
    description: storedText('description', 1000).nullable().optional(),
    status: RuleStatus.optional().describe('`draft` with a new expression keeps a live rule running its live version while the new one waits'),
  })
  .strict();
const CheckBody = z
  .object({ expression: Expression, transaction_id: z.string().min(1).max(200).optional().describe("Evaluate on what this stored transaction's decision saw") })
  .strict();

const Period = {
  from: Iso('from').optional().describe('Logged transactions at or after this time (default: the first)'),
  to: Iso('to').optional().describe('Before this time (default: now)'),
};
// Exactly one of the two, as two shapes, so the reference says what is enforced.
const BacktestBody = z.union([
  z.object({ rule_id: z.string().min(1).max(100), version: z.number().int().min(1).optional().describe('Default: the newest'), ...Period }).strict(),
  z.object({ expression: Expression, action: z.enum(RULE_ACTIONS), ...Period }).strict(),
]);

const OrgListParams = z.object({ id: z.string().min(1).max(100), name: z.string().min(1).max(100) });
const OrgRuleParams = z.object({ id: z.string().min(1).max(100), rule_id: z.string().min(1).max(100) });
const memberErrors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const keyErrors = { 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const bodyLimit = (app: Pick<App, 'config'>) => Math.max(app.config.MAX_JSON_BODY_BYTES, MAX_VALUES_PER_REQUEST * (MAX_VALUE_CHARS + 8));
const epoch = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

/** The dashboard's: a member of the organization, by session. */
export function memberRuleRoutes(
  server: FastifyInstance,
  app: Pick<App, 'config' | 'sessions' | 'organizations' | 'models' | 'lists' | 'rules' | 'backtests'>,
): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/organizations/:id/lists',
    {
      schema: {
        tags: ['rules'],
        summary: "The organization's lists, by name, with their item counts",
        params: OrgParams,
        response: { 200: ListIndex, ...memberErrors },
      },
    },
    async (request) => app.lists.all(await memberCaller(app, request, request.params.id)),
  );

  r.post(
    '/api/organizations/:id/lists',
    {
      schema: {
        tags: ['rules'],
        summary: 'Create a list',
        description:
          '`kind` says what it holds: `customer_id`, `merchant_id`, `location`, `payment_type`, `channel` (`payment_type:location`) or `text`. 409 `conflict` when the name is taken.',
        params: OrgParams,
        body: z.object({ name: ListName, kind: z.enum(LIST_KINDS), description: storedText('description', 1000).optional() }).strict(),
        response: { 201: List, ...memberErrors },
      },
    },
    async (request, reply) => {
      const caller = await memberCaller(app, request, request.params.id);
      reply.code(201);
      return app.lists.create(caller, request.body);
    },
  );

  r.get(
    '/api/organizations/:id/lists/:name',
    {
      schema: {
        tags: ['rules'],
        summary: 'A list and a page of its values, in value order',
        description:
          'The values on it now; with `as_of`, those it had at that time (each with when it was added and, if since, removed). The next page starts after the last value of this one (`starting_after`).',
        params: OrgListParams,
        querystring: z
          .object({
            as_of: Iso('as_of').optional(),
            starting_after: z.string().min(1).max(MAX_VALUE_CHARS).optional(),
            limit: z.coerce.number().int().min(1).max(1000).default(100),
          })
          .strict(),
        response: { 200: ListPage, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      const q = request.query;
      return app.lists.page(caller, request.params.name, { asOf: epoch(q.as_of), startingAfter: q.starting_after, limit: q.limit });
    },
  );

  r.get(
    '/api/organizations/:id/lists/:name/audit',
    {
      schema: {
        tags: ['rules'],
        summary: "A list's recorded changes, newest first: who, when, what",
        description:
          'Its creation and every add and remove of values, whether from the dashboard or an API key. `limit` 1–100 (default 25); the next page starts after the last `id` of this one (`starting_after`). Answer: `{ data, has_more }`.',
        params: OrgListParams,
        querystring: z
          .object({
            limit: z.coerce.number().int().min(1).max(100).default(25),
            starting_after: z
              .string()
              .regex(/^[1-9][0-9]{0,14}$/, 'starting_after is the id of a change, e.g. 42')
              .optional()
              .describe('The last id of the previous page'),
          })
          .strict(),
        response: { 200: ListAudit, ...memberErrors },
      },
    },
    async (request) => {
      const caller = await memberCaller(app, request, request.params.id);
      return app.lists.audit(caller, request.params.name, { startingAfter: request.query.starting_after, limit: request.query.limit });
    },
  );

  r.delete(
    '/api/organizations/:id/lists/:name',
    {
      schema: {
        tags: ['rules'],
        summary: 'Delete a list (409 `list_in_use` while an active or shadow rule names it)',
        params: OrgListParams,
        response: { 204: z.null().describe('Deleted'), ...memberErrors },
      },
    },
    async (request, reply) => {
      await app.lists.remove(await memberCaller(app, request, request.params.id), request.params.name);
      reply.code(204);
      return null;
    },
  );

  r.post(
    '/api/organizations/:id/lists/:name/items',
    {
      bodyLimit: bodyLimit(app),
      schema: {
        tags: ['rules'],
        summary: `Add up to ${MAX_VALUES_PER_REQUEST.toLocaleString('en')} values to a list`,
        params: OrgListParams,
        body: AddItems,
        response: { 200: AddResult, ...memberErrors },
      },
    },
    async (request) =>
      app.lists.addItems(await memberCaller(app, request, request.params.id), request.params.name, {
        ...request.body,
        expires_at: epoch(request.body.expires_at),
      }),
  );

  r.delete(
    '/api/organizations/:id/lists/:name/items',
    {
      bodyLimit: bodyLimit(app),
      schema: {
        tags: ['rules'],
        summary: 'Remove values from a list (kept in its history)',
        params: OrgListParams,
        body: RemoveItems,
        response: { 200: RemoveResult, ...memberErrors },
      },
    },
    async (request) => app.lists.removeItems(await memberCaller(app, request, request.params.id), request.params.name, request.body.values),
  );

  r.get(
    '/api/organizations/:id/rules',
    {
      schema: {
        tags: ['rules'],
        summary: "The organization's rules, by name, with their 7-day matches and errors",
        params: OrgParams,
        response: { 200: RuleList, ...memberErrors },
      },
    },
    async (request) => app.rules.all(await memberCaller(app, request, request.params.id)),
  );

  r.post(
    '/api/organizations/:id/rules',
    {
      schema: {
        tags: ['rules'],
        summary: 'Create a rule',
        description:
          'The expression is checked first: an invalid one is 422 `invalid_rule` with `detail.errors: [{ message, line, column }]`, and nothing is stored. A list compared with a field (`in_list("name", customer_id)`) must hold that field\'s values (a list of that kind, or `text`). `status` defaults to `draft`; `active` rules decide, `shadow` rules are recorded only. Creating an `active` rule is for owners (an analyst gets 403 `forbidden`). 409 `conflict` when the name is taken.',
        params: OrgParams,
        body: CreateRule,
        response: { 201: Rule, ...memberErrors },
      },
    },
    async (request, reply) => {
      const caller = await memberCaller(app, request, request.params.id);
      const created = await app.rules.create(caller, request.body);
      reply.code(201);
      return created;
    },
  );

  r.post(
    '/api/organizations/:id/rules/check',
    {
      schema: {
        tags: ['rules'],
        summary: 'Check an expression, and evaluate it on a stored transaction',
        description:
          "Answers whether it can be saved (with each problem's line and column) and the lists it uses; given `transaction_id`, whether it matches what that transaction's decision saw, with the lists as they were then, and the values it read.",
        params: OrgParams,
        body: CheckBody,
        response: { 200: CheckResult, ...memberErrors },
      },
    },
    async (request) => app.rules.check(await memberCaller(app, request, request.params.id), request.body),
  );

  r.post(
    '/api/organizations/:id/rules/backtests',
    {
      schema: {
        tags: ['rules'],
        summary: "Backtest a rule on the organization's logged decisions (a job); returns the job",
        description: `\`{ rule_id, version? }\` (a saved rule, by default its newest version) or \`{ expression, action }\` (not saved), over \`from\`–\`to\` (default: everything scored). Each logged transaction is evaluated on what its decision saw, with the lists as they were at its time. 202 with the job (GET /api/jobs/{id}, \`kind\` \`backtest\`); once it has succeeded its \`summary\` is the report: \`scanned, errors, matched, outcomes { fraud, legit, unknown }\` (of the matched, as known now), \`precision, recall\` (of all fraud reported in the period), \`fraud_amount, legit_amount, changes { "<from>-><to>": n }, per_day, examples { fraud, legit, unknown }\` (with the values read), \`warnings\`, and \`compare\`: the same figures for the live version when another one is tested. Counts against the organization's ${app.config.MAX_JOBS_PER_ORG_PER_DAY} jobs per UTC day.`,
        params: OrgParams,
        body: BacktestBody,
        response: { 202: Job, ...memberErrors, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { user } = requireUser(request, app.sessions);
      const org = await app.organizations.member(request.params.id, user.id);
      app.models.bundle();
      const b = request.body;
      return reply.code(202).send(await app.backtests.queue(org, user.id, { ...b, from: epoch(b.from), to: epoch(b.to) }));
    },
  );

  r.get(
    '/api/organizations/:id/rules/:rule_id',
    {
      schema: { tags: ['rules'], summary: 'One rule', params: OrgRuleParams, response: { 200: Rule, ...memberErrors } },
    },
    async (request) => app.rules.one(await memberCaller(app, request, request.params.id), request.params.rule_id),
  );

  r.put(
    '/api/organizations/:id/rules/:rule_id',
    {
      schema: {
        tags: ['rules'],
        summary: 'Change a rule: a new version, a status, a name',
        description:
          'An empty body changes nothing. A new expression, action or description saves a new version (versions never change); it goes live at once when the rule is active or shadow, unless `status` is `draft`. A status alone (`active`, `shadow`, `disabled`, `draft`) changes how the newest version is used. Making a rule active, and any change of an active rule, is for owners (an analyst gets 403 `forbidden`). Every change is audited.',
        params: OrgRuleParams,
        body: ChangeRule,
        response: { 200: Rule, ...memberErrors },
      },
    },
    async (request) => app.rules.change(await memberCaller(app, request, request.params.id), request.params.rule_id, request.body),
  );

  r.delete(
    '/api/organizations/:id/rules/:rule_id',
    {
      schema: {
        tags: ['rules'],
        summary: 'Delete a rule (its versions and matches are kept for the record)',
        description: 'An active rule is for owners to delete (an analyst gets 403 `forbidden`).',
        params: OrgRuleParams,
        response: { 204: z.null().describe('Deleted'), ...memberErrors },
      },
    },
    async (request, reply) => {
      await app.rules.remove(await memberCaller(app, request, request.params.id), request.params.rule_id);
      reply.code(204);
      return null;
    },
  );

  r.get(
    '/api/organizations/:id/rules/:rule_id/versions',
    {
      schema: { tags: ['rules'], summary: "A rule's versions, newest first", params: OrgRuleParams, response: { 200: RuleVersions, ...memberErrors } },
    },
    async (request) => app.rules.versions(await memberCaller(app, request, request.params.id), request.params.rule_id),
  );

  r.get(
    '/api/organizations/:id/rules/:rule_id/history',
    {
      schema: {
        tags: ['rules'],
        summary: 'Every change of a rule, oldest first: who, when, what',
        description:
          '`action`: `created`, `version` (a new version saved), `changed` (a status or name), `deleted`; `detail` holds the status, version and live version after the change.',
        params: OrgRuleParams,
        response: { 200: RuleHistory, ...memberErrors },
      },
    },
    async (request) => app.rules.history(await memberCaller(app, request, request.params.id), request.params.rule_id),
  );
}

/** The key surface's list values (registered under the API-key hook, app.ts). */
export function keyListRoutes(server: FastifyInstance, app: KeySurface): void {
  const r = server.withTypeProvider<ZodTypeProvider>();
  const Params = z.object({ name: z.string().min(1).max(100) });

  r.post(
    '/api/v1/lists/:name/items',
    {
      bodyLimit: bodyLimit(app),
      schema: {
        tags: ['rules'],
        summary: "Add values to one of the key's organization's lists",
        description:
          "E.g. block a customer after a chargeback: the next score of every process of the service sees it (within the live feed's lag; this process at once).",
        security: [{ apiKey: [] }],
        params: Params,
        body: AddItems,
        response: { 200: AddResult, ...keyErrors },
      },
    },
    async (request) =>
      app.lists.addItems(OrganizationCaller.key(request.apiKey!), request.params.name, { ...request.body, expires_at: epoch(request.body.expires_at) }),
  );

  r.delete(
    '/api/v1/lists/:name/items',
    {
      bodyLimit: bodyLimit(app),
      schema: {
        tags: ['rules'],
        summary: "Remove values from one of the key's organization's lists",
        security: [{ apiKey: [] }],
        params: Params,
        body: RemoveItems,
        response: { 200: RemoveResult, ...keyErrors },
      },
    },
    async (request) => app.lists.removeItems(OrganizationCaller.key(request.apiKey!), request.params.name, request.body.values),
  );
}
