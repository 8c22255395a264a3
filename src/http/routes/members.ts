// An organization's members on the dashboard's surface (`/api/organizations/{id}/members…`, session
// and CSRF): every member reads the members, the invitations waiting and the audit of their
// changes; owners invite by e-mail, withdraw an invitation, change a role and remove a member, and
// any member may remove themselves. Who may do what, the last owner's protection and the answers'
// shapes are the use cases' (app/access/members.ts, app/access/roles.ts, contract/organizations.ts);
// this file reads the request, names whom it acts for and sends their answer.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { Invitation, InvitationRequest, MAX_INVITATIONS, Member, MemberAudit, MemberList, RoleChange } from '../../contract/organizations.ts';
import { memberCaller } from '../ownership.ts';
import { OrgParams } from '../records.ts';

const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const MemberParams = OrgParams.extend({ user_id: z.string().min(1).max(200).describe("The member's user id") });
const InvitationParams = OrgParams.extend({ email: z.string().min(3).max(254).describe('The invited e-mail (compared without case)') });
const ownersOnly = 'Owners only (an analyst gets 403 `forbidden`).';

export function memberRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'organizations' | 'members'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/organizations/:id/members',
    {
      schema: {
        tags: ['accounts'],
        summary: "The organization's members and the invitations waiting",
        description:
          'Members oldest first, each with the e-mail and name the identity provider last gave, the role and since when; invitations not claimed yet. Every member reads them.',
        params: OrgParams,
        response: { 200: MemberList, ...errors },
      },
    },
    async (request) => app.members.all(await memberCaller(app, request, request.params.id)),
  );

  r.post(
    '/api/organizations/:id/members',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Invite someone by e-mail, with a role (owners)',
        description: `${ownersOnly} Whoever first signs in with this e-mail, verified by the identity provider (compared without case), joins with the role; until then the invitation is listed. An e-mail a member signed in with, or one invited already, is 409 \`conflict\`; at most ${MAX_INVITATIONS} invitations wait at once (400 \`limit_reached\`). Audited.`,
        params: OrgParams,
        body: InvitationRequest,
        response: { 201: Invitation, 400: ErrorResponse, 409: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      const made = await app.members.invite(await memberCaller(app, request, request.params.id), request.body);
      return reply.code(201).send(made);
    },
  );

  r.get(
    '/api/organizations/:id/members/audit',
    {
      schema: {
        tags: ['accounts'],
        summary: "The organization's membership changes, newest first: who, when, what",
        description:
          'Invitations made and withdrawn, members joining (an invitation claimed at sign-in, or the organization created), roles changed, members removed or leaving. `limit` 1–100 (default 25); the next page starts after the last `id` of this one (`starting_after`). Every member reads it.',
        params: OrgParams,
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
        response: { 200: MemberAudit, ...errors },
      },
    },
    async (request) =>
      app.members.audit(await memberCaller(app, request, request.params.id), { limit: request.query.limit, startingAfter: request.query.starting_after }),
  );

  r.patch(
    '/api/organizations/:id/members/:user_id',
    {
      schema: {
        tags: ['accounts'],
        summary: "Change a member's role (owners)",
        description: `${ownersOnly} The organization's last owner cannot be made an analyst (409 \`conflict\`: make another member an owner first). The same role changes nothing. Audited.`,
        params: MemberParams,
        body: RoleChange,
        response: { 200: Member, 409: ErrorResponse, ...errors },
      },
    },
    async (request) => app.members.changeRole(await memberCaller(app, request, request.params.id), request.params.user_id, request.body.role),
  );

  r.delete(
    '/api/organizations/:id/members/:user_id',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Remove a member (owners), or leave (anyone, with their own user id)',
        description:
          "Owners remove any member; any member removes themselves. The organization's last owner cannot go (409 `conflict`: make another member an owner first). Their access ends with their next request; the API keys they made stay the organization's. Audited.",
        params: MemberParams,
        response: { 204: z.null().describe('Removed'), 409: ErrorResponse, ...errors },
      },
    },
    async (request, reply) => {
      await app.members.remove(await memberCaller(app, request, request.params.id), request.params.user_id);
      return reply.code(204).send(null);
    },
  );

  r.delete(
    '/api/organizations/:id/invitations/:email',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Withdraw an invitation (owners)',
        description: `${ownersOnly} The e-mail is compared without case; one that has no invitation waiting (never invited, withdrawn, or claimed: a member now) is 404. Audited.`,
        params: InvitationParams,
        response: { 204: z.null().describe('Withdrawn'), ...errors },
      },
    },
    async (request, reply) => {
      await app.members.withdraw(await memberCaller(app, request, request.params.id), request.params.email);
      return reply.code(204).send(null);
    },
  );
}
