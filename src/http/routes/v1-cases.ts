// `POST /api/v1/cases` on the customer surface (`Authorization: Bearer <API key>`, checked for every
// /api/v1 route by the surface's hook, app.ts): a server opens a case on one of its transactions,
// or adds the transaction to its entity's open case. The use case is app/cases/server-cases.ts's;
// this file reads the request and answers 201 when a case was opened, 200 when it was joined.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { KeySurface } from '../../app/app.ts';
import { OrganizationCaller } from '../../app/access/organization-caller.ts';
import { Case, OpenCaseRequest } from '../../contract/cases.ts';
import { ErrorResponse } from '../../contract/errors.ts';

export function keyCaseRoutes(server: FastifyInstance, app: Pick<KeySurface, 'serverCases'>): void {
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/v1/cases',
    {
      schema: {
        tags: ['cases'],
        summary: 'Open a case on a transaction (or add it to the open case of its entity)',
        description:
          "For a transaction worth a person's look whatever its decision was (a chargeback dispute, a customer's complaint). The case is the one a decision of the transaction would open or join: in the inbox its stored decision's routing picks (else the organization's default inbox, else its first), grouped as that inbox groups (its customer by default), so the organization never has two open cases of one entity in an inbox. 201 with the case when this opened it (a `case.opened` event), 200 when the transaction joined the open case or was in it already (sending it again adds nothing). The timeline records the key (`key:<id>`) and the reason. An unknown transaction_id is 404 `not_found`; an organization without an inbox is 409 `no_inbox`.",
        security: [{ apiKey: [] }],
        body: OpenCaseRequest,
        response: { 200: Case, 201: Case, 401: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const answer = await app.serverCases.open(OrganizationCaller.key(request.apiKey!), request.body);
      reply.code(answer.opened ? 201 : 200);
      return answer.case;
    },
  );
}
