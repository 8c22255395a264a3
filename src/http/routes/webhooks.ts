// An organization's webhooks on the dashboard's surface (session and CSRF): owners create, change,
// disable, rotate and delete endpoints; members read them and their deliveries, send a test event
// and redeliver. The use cases are app/webhooks/endpoints.ts's; the response shapes are
// contract/webhooks.ts's, the request shapes here, and both are the OpenAPI reference's.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { MAX_ENDPOINTS_PER_ORG } from '../../app/webhooks/endpoints.ts';
import {
  WEBHOOK_EVENT_TYPES,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookQueued,
} from '../../contract/webhooks.ts';
import { requireUser } from '../caller.ts';
import { OrgParams } from '../records.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { storedText } from '../../contract/stored-text.ts';

const Url = z.string().min(1).max(2048, 'url is at most 2048 characters').describe('https; where every event is POSTed');
const Events = z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1, 'subscribe to at least one event type').max(WEBHOOK_EVENT_TYPES.length);
const CreateEndpoint = z.object({ url: Url, events: Events, description: storedText('description', 500).optional() }).strict();
const ChangeEndpoint = z
  .object({
    url: Url.optional(),
    events: Events.optional(),
    description: storedText('description', 500).nullable().optional(),
    status: z.enum(['enabled', 'disabled']).optional().describe('`enabled` again sends its pending deliveries, in order'),
  })
  .strict();
const EndpointParams = z.object({ id: z.string().min(1).max(100), webhook_id: z.string().min(1).max(100) });
const DeliveryParams = EndpointParams.extend({ delivery_id: z.string().min(1).max(100) });
const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };
const ownersOnly = 'Owners only (an analyst gets 403).';

export function webhookRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'webhooks'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();
  const user = (request: Parameters<typeof requireUser>[0]) => requireUser(request, app.sessions).user.id;

  r.get(
    '/api/organizations/:id/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: "The organization's webhook endpoints (no secret)",
        params: OrgParams,
        response: { 200: WebhookEndpointList, ...errors },
      },
    },
    async (request) => ({ data: await app.webhooks.all(request.params.id, user(request)) }),
  );

  r.post(
    '/api/organizations/:id/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Create a webhook endpoint (its signing secret is answered once)',
        description: `${ownersOnly} The URL must be https and resolve to public addresses only (422 \`invalid_webhook_url\`); at most ${MAX_ENDPOINTS_PER_ORG} endpoints per organization.`,
        params: OrgParams,
        body: CreateEndpoint,
        response: { 201: WebhookEndpointWithSecret, ...errors },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return app.webhooks.create(request.params.id, user(request), request.body);
    },
  );

  r.get(
    '/api/organizations/:id/webhooks/:webhook_id',
    {
      schema: { tags: ['webhooks'], summary: 'One webhook endpoint', params: EndpointParams, response: { 200: WebhookEndpoint, ...errors } },
    },
    async (request) => app.webhooks.one(request.params.id, user(request), request.params.webhook_id),
  );

  r.patch(
    '/api/organizations/:id/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Change, disable or enable a webhook endpoint',
        description: ownersOnly,
        params: EndpointParams,
        body: ChangeEndpoint,
        response: { 200: WebhookEndpoint, ...errors },
      },
    },
    async (request) => app.webhooks.change(request.params.id, user(request), request.params.webhook_id, request.body),
  );

  r.delete(
    '/api/organizations/:id/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint and its deliveries log',
        description: ownersOnly,
        params: EndpointParams,
        response: { 204: z.null(), ...errors },
      },
    },
    async (request, reply) => {
      await app.webhooks.remove(request.params.id, user(request), request.params.webhook_id);
      return reply.code(204).send(null);
    },
  );

  r.post(
    '/api/organizations/:id/webhooks/:webhook_id/rotate',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Issue a new signing secret (answered once); the previous one keeps signing for 24 hours',
        description: `${ownersOnly} During the overlap every delivery carries two signatures, one per secret, so the receiver can switch at any moment.`,
        params: EndpointParams,
        response: { 200: WebhookEndpointWithSecret, ...errors },
      },
    },
    async (request) => app.webhooks.rotate(request.params.id, user(request), request.params.webhook_id),
  );

  r.get(
    '/api/organizations/:id/webhooks/:webhook_id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "An endpoint's deliveries, newest first, each with its attempts",
        description: 'The next page starts after the last `id` of this one (`starting_after`).',
        params: EndpointParams,
        querystring: z
          .object({
            limit: z.coerce.number().int().min(1).max(100).default(25),
            starting_after: z.string().min(1).max(100).optional(),
            status: z.enum(['pending', 'succeeded', 'failed']).optional(),
          })
          .strict(),
        response: { 200: WebhookDeliveryPage, ...errors },
      },
    },
    async (request) =>
      app.webhooks.deliveries(request.params.id, user(request), request.params.webhook_id, {
        limit: request.query.limit,
        startingAfter: request.query.starting_after,
        status: request.query.status,
      }),
  );

  r.get(
    '/api/organizations/:id/webhooks/:webhook_id/deliveries/:delivery_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'One delivery with its attempts and the event it carries',
        params: DeliveryParams,
        response: { 200: WebhookDeliveryDetail, ...errors },
      },
    },
    async (request) => app.webhooks.delivery(request.params.id, user(request), request.params.webhook_id, request.params.delivery_id),
  );

  r.post(
    '/api/organizations/:id/webhooks/:webhook_id/test',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a `webhook.test` event to this endpoint',
        description: 'Queued after its pending deliveries; see it in the deliveries log.',
        params: EndpointParams,
        response: { 202: WebhookQueued, ...errors },
      },
    },
    async (request, reply) => {
      reply.code(202);
      return app.webhooks.test(request.params.id, user(request), request.params.webhook_id);
    },
  );

  r.post(
    '/api/organizations/:id/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        tags: ['webhooks'],
        summary: "Send a delivery's event again (same `webhook-id`)",
        description: 'Queued as a new delivery after the pending ones.',
        params: DeliveryParams,
        response: { 202: WebhookQueued, ...errors },
      },
    },
    async (request, reply) => {
      reply.code(202);
      return app.webhooks.redeliver(request.params.id, user(request), request.params.webhook_id, request.params.delivery_id);
    },
  );
}
