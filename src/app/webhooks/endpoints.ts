// An organization's webhook endpoints, as use cases: owners create, change, disable, rotate the
// secret of and delete endpoints (access/roles.ts, `manageWebhooks`); every member reads them, their
// deliveries log, and may send a test event or redeliver one (`testWebhooks`). The signing secret (`whsec_…`) is answered once, at creation or
// rotation, and otherwise kept sealed (secret-box.ts); no listing or log line holds it. A URL is
// checked when it is saved (form, and every address it resolves to: jobs/webhook-address.ts) and
// again at every delivery. Every read and write goes through the organization's webhooks part
// (`organizationData(db, id).webhooks`), so another organization's endpoint is simply not found.

import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.ts';
import { memberOrganization } from '../access/ownership.ts';
import { requireCapability, type Capability } from '../access/roles.ts';
import { randomId } from '../access/secrets.ts';
import type { SecretBox } from '../access/secret-box.ts';
import { checkWebhookUrl, WebhookAddressRefused, type AddressPolicy } from '../../jobs/webhook-address.ts';
import type { Db } from '../../storage/db.ts';
import type { OrganizationRow } from '../../storage/accounts-store.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationWebhooks } from '../../storage/organization-data.ts';
import type { DeliveryRow, EndpointRow } from '../../storage/webhooks-store.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookEventType, WebhookDeliveryDetail } from '../../contract/webhooks.ts';

/** Endpoints per organization. */
export const MAX_ENDPOINTS_PER_ORG = 16;
/** How long the secret a rotation replaces keeps signing. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;

export interface WebhookDeps {
  db: Db;
  /** Undefined without a hashing secret (PostgreSQL without SESSION_SECRET): no endpoint can be kept. */
  box: SecretBox | undefined;
  policy: AddressPolicy;
  /** An endpoint's status or events changed (created, changed, deleted): resolves once this
   *  process's view of the organization's decision subscriptions holds it, so a payment scored
   *  after the answer is an event for it. Other processes hear of it by a notification. */
  endpointsChanged: (organizationId: string) => Promise<void>;
}

export interface EndpointInput {
  url: string;
  events: readonly WebhookEventType[];
  description?: string | null | undefined;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function endpointView(e: EndpointRow): WebhookEndpoint {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events as WebhookEventType[],
    status: e.status,
    disabled_reason: e.disabled_reason as WebhookEndpoint['disabled_reason'],
    disabled_message: e.disabled_message,
    disabled_at: iso(e.disabled_at),
    secret_rotated_at: iso(e.secret_rotated_at),
    previous_secret_expires_at: iso(e.previous_secret_expires_at),
    created_at: e.created_at.toISOString(),
    created_by: e.created_by,
    updated_at: e.updated_at.toISOString(),
  };
}

function deliveryView(d: DeliveryRow): WebhookDelivery {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    event_created_at: d.event_created_at.toISOString(),
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: iso(d.next_attempt_at),
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    delivered_at: iso(d.delivered_at),
    created_at: d.created_at.toISOString(),
    attempt_log: d.attempt_log.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
      response_excerpt: a.response_excerpt,
    })),
  };
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function sealing(deps: WebhookDeps): SecretBox {
  if (!deps.box)
    throw new AppError(
      'auth_not_configured',
      'Webhooks cannot be signed: this server has no SESSION_SECRET.',
      'Set SESSION_SECRET (the same value in every server process sharing the database; README, Configuration) and restart.',
    );
  return deps.box;
}

async function webhooksOf(
  deps: WebhookDeps,
  orgId: string,
  userId: string,
  capability: Capability | undefined,
): Promise<{ organization: OrganizationRow; webhooks: OrganizationWebhooks }> {
  const organization = await memberOrganization(deps.db, orgId, userId);
  if (capability) requireCapability(organization.role, capability, organization.name);
  return { organization, webhooks: organizationData(deps.db, organization.id).webhooks };
}

const noEndpoint = (id: string) =>
  new AppError('not_found', `No webhook endpoint ${id} in this organization.`, "List the organization's endpoints with GET /api/organizations/{id}/webhooks.");

async function checkedUrl(deps: WebhookDeps, url: string): Promise<string> {
  try {
    await checkWebhookUrl(url, deps.policy);
  } catch (e) {
    if (!(e instanceof WebhookAddressRefused)) throw e;
    throw new AppError(
      'invalid_webhook_url',
      e.message,
      deps.policy.allowPrivateNetworks
        ? 'Use an absolute https URL (http is allowed for loopback in development).'
        : 'Use an https URL whose host resolves to public addresses only (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lifts this, for development).',
      { fields: [{ path: 'body.url', message: e.message }] },
    );
  }
  return url;
}

export async function webhookEndpoints(deps: WebhookDeps, orgId: string, userId: string): Promise<WebhookEndpoint[]> {
  const { webhooks } = await webhooksOf(deps, orgId, userId, undefined);
  return (await webhooks.all()).map(endpointView);
}

export async function webhookEndpoint(deps: WebhookDeps, orgId: string, userId: string, id: string): Promise<WebhookEndpoint> {
  const { webhooks } = await webhooksOf(deps, orgId, userId, undefined);
  const row = await webhooks.one(id);
  if (!row) throw noEndpoint(id);
  return endpointView(row);
}

export async function createWebhookEndpoint(
  deps: WebhookDeps,
  orgId: string,
  userId: string,
  input: EndpointInput,
): Promise<WebhookEndpoint & { secret: string }> {
  const box = sealing(deps);
  const { organization, webhooks } = await webhooksOf(deps, orgId, userId, 'manageWebhooks');
  if ((await webhooks.all()).length >= MAX_ENDPOINTS_PER_ORG) {
    throw new AppError(
      'limit_reached',
      `This organization has ${MAX_ENDPOINTS_PER_ORG} webhook endpoints, the most it may have.`,
      'Delete an endpoint it no longer needs, or subscribe an existing one to more events.',
    );
  }
  const url = await checkedUrl(deps, input.url);
  const secret = newSecret();
  const row = await webhooks.create({
    id: randomId('we'),
    url,
    description: input.description ?? null,
    events: [...new Set(input.events)],
    secretSealed: box.seal(secret),
    by: userId,
  });
  await deps.endpointsChanged(organization.id);
  return { ...endpointView(row), secret };
}

export async function changeWebhookEndpoint(
  deps: WebhookDeps,
  orgId: string,
  userId: string,
  id: string,
  change: Partial<EndpointInput> & { status?: 'enabled' | 'disabled' | undefined },
): Promise<WebhookEndpoint> {
  const { organization, webhooks } = await webhooksOf(deps, orgId, userId, 'manageWebhooks');
  const url = change.url === undefined ? undefined : await checkedUrl(deps, change.url);
  const row = await webhooks.change(id, { url, description: change.description, events: change.events && [...new Set(change.events)], status: change.status });
  if (!row) throw noEndpoint(id);
  await deps.endpointsChanged(organization.id);
  return endpointView(row);
}

/** A new secret, answered once; the one it replaces keeps signing for 24 hours. */
export async function rotateWebhookSecret(deps: WebhookDeps, orgId: string, userId: string, id: string): Promise<WebhookEndpoint & { secret: string }> {
  const box = sealing(deps);
  const { webhooks } = await webhooksOf(deps, orgId, userId, 'manageWebhooks');
  const secret = newSecret();
  const row = await webhooks.rotate(id, box.seal(secret), ROTATION_OVERLAP_SECONDS);
  if (!row) throw noEndpoint(id);
  return { ...endpointView(row), secret };
}

export async function deleteWebhookEndpoint(deps: WebhookDeps, orgId: string, userId: string, id: string): Promise<void> {
  const { organization, webhooks } = await webhooksOf(deps, orgId, userId, 'manageWebhooks');
  if (!(await webhooks.delete(id))) throw noEndpoint(id);
  await deps.endpointsChanged(organization.id);
}

/** An endpoint's deliveries, newest first: `limit` after the delivery `startingAfter` (the previous page's last). */
export async function webhookDeliveries(
  deps: WebhookDeps,
  orgId: string,
  userId: string,
  id: string,
  q: { limit: number; startingAfter?: string | undefined; status?: WebhookDelivery['status'] | undefined },
): Promise<{ data: WebhookDelivery[]; has_more: boolean }> {
  const { webhooks } = await webhooksOf(deps, orgId, userId, undefined);
  if (!(await webhooks.one(id))) throw noEndpoint(id);
  let before: number | null = null;
  if (q.startingAfter !== undefined) {
    const after = await webhooks.delivery(id, q.startingAfter);
    if (!after)
      throw new AppError('validation_failed', `starting_after names no delivery of endpoint ${id}.`, 'Pass the id of the last delivery of the previous page.', {
        fields: [{ path: 'querystring.starting_after', message: 'no such delivery' }],
      });
    before = after.seq;
  }
  const rows = await webhooks.deliveries(id, q.limit + 1, before, q.status ?? null);
  return { data: rows.slice(0, q.limit).map(deliveryView), has_more: rows.length > q.limit };
}

export async function webhookDelivery(deps: WebhookDeps, orgId: string, userId: string, id: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
  const { webhooks } = await webhooksOf(deps, orgId, userId, undefined);
  const row = await webhooks.delivery(id, deliveryId);
  if (!row)
    throw new AppError(
      'not_found',
      `No delivery ${deliveryId} of endpoint ${id}.`,
      "List the endpoint's deliveries with GET …/webhooks/{webhook_id}/deliveries.",
    );
  return { ...deliveryView(row), payload: row.payload };
}

/** Queues a `webhook.test` event for this endpoint alone. */
export async function sendTestEvent(deps: WebhookDeps, orgId: string, userId: string, id: string): Promise<{ event_id: string; delivery_id: string }> {
  const { organization, webhooks } = await webhooksOf(deps, orgId, userId, 'testWebhooks');
  const queued = await webhooks.sendTest(id, { message: `A test event for ${organization.name}, sent on request.`, requested_by: userId });
  if (!queued) throw noEndpoint(id);
  return queued;
}

/** Queues the delivery's event again for its endpoint, after its pending deliveries. */
export async function redeliverWebhook(deps: WebhookDeps, orgId: string, userId: string, id: string, deliveryId: string): Promise<{ delivery_id: string }> {
  const { webhooks } = await webhooksOf(deps, orgId, userId, 'testWebhooks');
  const queued = await webhooks.redeliver(id, deliveryId);
  if (!queued)
    throw new AppError(
      'not_found',
      `No delivery ${deliveryId} of endpoint ${id}.`,
      "List the endpoint's deliveries with GET …/webhooks/{webhook_id}/deliveries.",
    );
  return { delivery_id: queued };
}
