// Organizations and their API keys (signed in; docs/operating.md): create one (the caller becomes its
// owner), list mine, read one with its members and stage, list its keys masked, create a key (the
// secret is shown once), rotate (the old secret stops at once) and revoke (permanent), and read the
// keys' daily usage. Another organization's organization, keys and usage answer 404, never 403: an
// outsider cannot even learn that an id exists. Managing keys is for owners (an analyst gets 403).
// Those decisions are the use cases' (app/access/organizations.ts), and so is the shape of every
// answer (contract/organizations.ts); this file translates HTTP to them.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { USAGE_DAYS } from '../../app/access/organizations.ts';
import type { App } from '../../app/app.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import {
  ApiKey,
  ApiKeyList,
  ApiKeyWithSecret,
  Organization,
  OrganizationDatasetObjects,
  OrganizationList,
  OrganizationWithMembers,
  Usage,
} from '../../contract/organizations.ts';
import { requireUser } from '../caller.ts';
import { OrgParams } from '../records.ts';
import { storedText } from '../../contract/stored-text.ts';

const CreateOrganization = z
  .object({
    name: storedText('name', 200),
    stage: z.enum(['test', 'live']).default('test').describe('`test` keys begin sk_test_, `live` keys sk_live_'),
  })
  .strict();
const CreateKey = z.object({ name: storedText('name', 200) }).strict();

export function organizationRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'organizations'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();
  const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse };

  r.get(
    '/api/organizations',
    {
      schema: { tags: ['accounts'], summary: 'Organizations I belong to', response: { 200: OrganizationList, ...errors } },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.mine(user.id);
    },
  );

  r.post(
    '/api/organizations',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Create an organization (I become its owner)',
        body: CreateOrganization,
        response: { 201: Organization, ...errors },
      },
    },
    async (request, reply) => {
      const { user } = requireUser(request, app.sessions);
      return reply.code(201).send(await app.organizations.create(user.id, { name: request.body.name, stage: request.body.stage }));
    },
  );

  r.get(
    '/api/organizations/:id',
    {
      schema: {
        tags: ['accounts'],
        summary: 'One organization with its members and stage',
        params: OrgParams,
        response: { 200: OrganizationWithMembers, ...errors },
      },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.withMembers(request.params.id, user.id);
    },
  );

  r.get(
    '/api/organizations/:id/api-keys',
    {
      schema: { tags: ['accounts'], summary: "The organization's API keys, masked", params: OrgParams, response: { 200: ApiKeyList, ...errors } },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.keys(request.params.id, user.id);
    },
  );

  r.post(
    '/api/organizations/:id/api-keys',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Create an API key (the secret is returned once)',
        params: OrgParams,
        body: CreateKey,
        response: { 201: ApiKeyWithSecret, ...errors },
      },
    },
    async (request, reply) => {
      const { user } = requireUser(request, app.sessions);
      return reply.code(201).send(await app.organizations.createKey(request.params.id, user.id, request.body.name));
    },
  );

  const KeyParams = z.object({ id: z.string().min(1).max(100) });

  r.post(
    '/api/api-keys/:id/rotate',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Issue a new secret; the old one stops at once',
        params: KeyParams,
        response: { 200: ApiKeyWithSecret, 409: ErrorResponse, ...errors },
      },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.rotateKey(request.params.id, user.id);
    },
  );

  r.post(
    '/api/api-keys/:id/revoke',
    {
      schema: { tags: ['accounts'], summary: 'Turn a key off for good (requests with it get 401)', params: KeyParams, response: { 200: ApiKey, ...errors } },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.revokeKey(request.params.id, user.id);
    },
  );

  r.get(
    '/api/organizations/:id/datasets',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Datasets owned by the organization',
        description: 'Uploads made with its `organization_id` that still have their file, newest first (at most 500).',
        params: OrgParams,
        response: { 200: OrganizationDatasetObjects, ...errors },
      },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.datasets(request.params.id, user.id);
    },
  );

  r.get(
    '/api/organizations/:id/usage',
    {
      schema: {
        tags: ['accounts'],
        summary: "Activity of the organization's keys",
        description: `Requests per key and UTC day over the last ${USAGE_DAYS} days, and each key's last use. Counts are written within a second of the request.`,
        params: OrgParams,
        response: { 200: Usage, ...errors },
      },
    },
    async (request) => {
      const { user } = requireUser(request, app.sessions);
      return app.organizations.usage(request.params.id, user.id);
    },
  );
}
