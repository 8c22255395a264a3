// Organizations, their members and their API keys, as the account routes answer them: mine, one
// with its members, its keys (masked; the secret only once, when a key is made or rotated), their
// daily usage, and the uploads it owns. The use cases (app/access/) answer with these and the routes
// send them; the dashboard's account pages read them.

import { z } from 'zod';
import { DatasetObject, type Dataset } from './datasets.ts';

export const Organization = z.object({
  id: z.string(),
  name: z.string(),
  stage: z.enum(['test', 'live']),
  role: z.enum(['owner', 'member']),
  created_at: z.string(),
});
export type Organization = z.infer<typeof Organization>;
export const OrganizationList = z.object({ organizations: z.array(Organization) });
export type OrganizationList = z.infer<typeof OrganizationList>;
export const Member = z.object({
  user_id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  role: z.enum(['owner', 'member']),
  joined_at: z.string(),
});
export type Member = z.infer<typeof Member>;
export const OrganizationWithMembers = Organization.extend({ members: z.array(Member) });
export type OrganizationWithMembers = z.infer<typeof OrganizationWithMembers>;
export const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  last4: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof ApiKey>;
export const ApiKeyList = z.object({ api_keys: z.array(ApiKey) });
export type ApiKeyList = z.infer<typeof ApiKeyList>;
export const ApiKeyWithSecret = ApiKey.extend({ secret: z.string().describe('Shown once: store it now; the server keeps only a keyed hash') });
export type ApiKeyWithSecret = z.infer<typeof ApiKeyWithSecret>;
export const Usage = z.object({
  organization_id: z.string(),
  since: z.string(),
  days: z.number().int(),
  keys: z.array(ApiKey.extend({ requests: z.number().int() })),
  daily: z.array(z.object({ day: z.string(), key_id: z.string(), key_name: z.string(), requests: z.number().int(), last_used_at: z.string() })),
});
export type Usage = z.infer<typeof Usage>;

/** `GET /api/organizations/{id}/datasets`: its uploads, each documented as an object (DatasetObject). */
export const OrganizationDatasetObjects = z.object({ datasets: z.array(DatasetObject) });
/** What that answers: each upload as the dataset routes describe it. */
export type OrganizationDatasets = { datasets: Dataset[] };
