// Data protection on both surfaces: on the dashboard's (session and CSRF), an organization's
// retention period (every member reads it, owners change it), a customer's export and erasure, the
// erasures and the audit (owners); on the customer surface (an API key), a customer's erasure asked
// by the organization's own server. Who may, what is erased and the answers' shapes are the use
// cases' (app/data-protection/requests.ts, contract/data-protection.ts).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App, KeySurface } from '../../app/app.ts';
import { OrganizationCaller } from '../../app/access/organization-caller.ts';
import {
  CustomerExport,
  CustomerParam,
  DataProtectionAudit,
  ErasureAccepted,
  ErasureList,
  ErasureRequest,
  Retention,
  RetentionRequest,
} from '../../contract/data-protection.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { memberCaller } from '../ownership.ts';
import { OrgParams } from '../records.ts';

const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse };
const CustomerParams = OrgParams.extend({ customer_id: CustomerParam });
const ownersOnly = 'Owners only (an analyst gets 403 `forbidden`).';
const page = (what: string) =>
  z
    .object({
      limit: z.coerce.number().int().min(1).max(100).default(25),
      starting_after: z.string().min(1).max(100).optional().describe(`The last ${what} of the previous page`),
    })
    .strict();
const erasureEffect =
  "Recorded at once (202, `pending`) and run within seconds by the service: the customer's transactions with their features, decisions and outcomes, its totals and first uses (the totals of its merchants, channels and key values adjusted as if its transactions had never been recorded), list entries naming it (except in the lists `keep_lists` names), the cases about it, its transactions in other cases (their timelines rewritten without its id), webhook events naming it and the rings it was in are deleted; every process then builds the organization's history again without it. Follow it in GET /api/organizations/{id}/erasures (`done`, with what was erased). A list in `keep_lists` the organization does not have is 404 `not_found`. Datasets you uploaded are files you delete yourself.";

export function dataProtectionRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'organizations' | 'dataProtection'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/organizations/:id/retention',
    {
      schema: {
        tags: ['data protection'],
        summary: 'How long recorded transactions are kept, and the latest sweep',
        description:
          'Every member reads it. Once a day the service deletes what is older (transactions with their outcomes and places in cases, webhook events, ring analyses); the totals the features count stay.',
        params: OrgParams,
        response: { 200: Retention, ...errors },
      },
    },
    async (request) => app.dataProtection.retention(await memberCaller(app, request, request.params.id)),
  );

  r.put(
    '/api/organizations/:id/retention',
    {
      schema: {
        tags: ['data protection'],
        summary: 'Change how long recorded transactions are kept (owners)',
        description: `${ownersOnly} From 30 days to 3,650 (ten years); 400 by default, which covers the card networks' chargeback windows. The next daily sweep deletes by it. Audited.`,
        params: OrgParams,
        body: RetentionRequest,
        response: { 200: Retention, 422: ErrorResponse, ...errors },
      },
    },
    async (request) => app.dataProtection.setRetention(await memberCaller(app, request, request.params.id), request.body.days),
  );

  r.get(
    '/api/organizations/:id/customers/:customer_id/export',
    {
      schema: {
        tags: ['data protection'],
        summary: 'Every record naming a customer, in one document (owners)',
        description: `${ownersOnly} For a customer's access request: their transactions with decisions and outcomes, list entries, cases, webhook events, totals and first uses. A customer with nothing recorded gets empty lists. Audited (by the customer's keyed hash).`,
        params: CustomerParams,
        response: { 200: CustomerExport, ...errors },
      },
    },
    async (request) => app.dataProtection.exportCustomer(await memberCaller(app, request, request.params.id), request.params.customer_id),
  );

  r.post(
    '/api/organizations/:id/customers/:customer_id/erasure',
    {
      schema: {
        tags: ['data protection'],
        summary: "Erase a customer's data (owners)",
        description: `${ownersOnly} ${erasureEffect}`,
        params: CustomerParams,
        body: ErasureRequest,
        response: { 202: ErasureAccepted, 422: ErrorResponse, ...errors },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await app.dataProtection.requestErasure(await memberCaller(app, request, request.params.id), request.params.customer_id, request.body ?? {})),
  );

  r.get(
    '/api/organizations/:id/erasures',
    {
      schema: {
        tags: ['data protection'],
        summary: "The organization's erasures, newest first (owners)",
        description: `${ownersOnly} Each with who asked and when, its status, what it erased and kept; the customer only by its keyed hash. \`limit\` 1–100 (default 25); the next page starts after the last \`id\` of this one (\`starting_after\`).`,
        params: OrgParams,
        querystring: page('erasure id'),
        response: { 200: ErasureList, ...errors },
      },
    },
    async (request) => app.dataProtection.erasures(await memberCaller(app, request, request.params.id), request.query.limit, request.query.starting_after),
  );

  r.get(
    '/api/organizations/:id/data-protection/audit',
    {
      schema: {
        tags: ['data protection'],
        summary: 'Every act of data protection, newest first (owners)',
        description: `${ownersOnly} Retention changes and sweeps (with what they deleted), exports and erasures (requested and done), each with who and when; customers only by their keyed hash. \`limit\` 1–100 (default 25); the next page starts after the last \`id\` of this one.`,
        params: OrgParams,
        querystring: page('entry id').extend({
          starting_after: z
            .string()
            .regex(/^[1-9][0-9]{0,14}$/, 'starting_after is the id of an entry, e.g. 42')
            .optional()
            .describe('The last id of the previous page'),
        }),
        response: { 200: DataProtectionAudit, ...errors },
      },
    },
    async (request) => app.dataProtection.audit(await memberCaller(app, request, request.params.id), request.query.limit, request.query.starting_after),
  );
}

export function keyErasureRoutes(server: FastifyInstance, app: Pick<KeySurface, 'dataProtection'>): void {
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/v1/customers/:customer_id/erasure',
    {
      schema: {
        tags: ['data protection'],
        summary: "Erase a customer's data (your server, on the customer's request)",
        description: erasureEffect,
        security: [{ apiKey: [] }],
        params: z.object({ customer_id: CustomerParam }),
        body: ErasureRequest,
        response: { 202: ErasureAccepted, 401: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await app.dataProtection.requestErasure(OrganizationCaller.key(request.apiKey!), request.params.customer_id, request.body ?? {})),
  );
}
