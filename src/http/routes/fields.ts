// An organization's own fields on the dashboard's surface (`/api/organizations/{id}/fields...`,
// session and CSRF): members read the declarations and a field's audit, owners declare and retire
// fields. The use cases are app/policy/fields.ts's; this file reads the request, names whom it acts
// for and sends their answer.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { Field, FieldAudit, FieldDeclarationRequest, FieldList, FieldName } from '../../contract/custom-fields.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { memberCaller } from '../ownership.ts';
import { OrgParams } from '../records.ts';

const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const FieldParams = OrgParams.extend({ name: z.string().min(1).max(100) });

export function fieldRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'organizations' | 'fields'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/organizations/:id/fields',
    {
      schema: {
        tags: ['fields'],
        summary: "The organization's declared fields, by name, with its limits",
        description: '`?retired=true` lists the retired fields too.',
        params: OrgParams,
        querystring: z.object({ retired: z.enum(['true', 'false']).default('false') }).strict(),
        response: { 200: FieldList, ...errors },
      },
    },
    async (request) => app.fields.all(await memberCaller(app, request, request.params.id), request.query.retired === 'true'),
  );

  r.post(
    '/api/organizations/:id/fields',
    {
      schema: {
        tags: ['fields'],
        summary: 'Declare a field (owners)',
        description:
          'A field its payments may carry as `fields.<name>`: its type, and for a string field whether it is a key (its values get a history of their own). At most 50 fields and 5 keys (400 `limit_reached`); a name declared already is 409 `conflict`; a retired name may be declared again. Analysts are 403 `forbidden`.',
        params: OrgParams,
        body: FieldDeclarationRequest,
        response: { 201: Field, 400: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      const field = await app.fields.declare(await memberCaller(app, request, request.params.id), request.body);
      reply.code(201);
      return field;
    },
  );

  r.delete(
    '/api/organizations/:id/fields/:name',
    {
      schema: {
        tags: ['fields'],
        summary: 'Retire a field (owners)',
        description:
          'Rules no longer read it and it is no longer declared; the values already stored stay in the records that carry them. Answers the retired field.',
        params: FieldParams.extend({ name: FieldName }),
        response: { 200: Field, ...errors },
      },
    },
    async (request) => app.fields.retire(await memberCaller(app, request, request.params.id), request.params.name),
  );

  r.get(
    '/api/organizations/:id/fields/:name/audit',
    {
      schema: {
        tags: ['fields'],
        summary: "A field's recorded changes, oldest first",
        params: FieldParams,
        response: { 200: FieldAudit, ...errors },
      },
    },
    async (request) => app.fields.audit(await memberCaller(app, request, request.params.id), request.params.name),
  );
}
