// What the webhooks surface answers, and the events it sends: the one definition of each shape,
// read by the use cases (their return types), the routes (validation and the OpenAPI reference)
// and the dashboard (`import type`). An event's `data` is the API's own shape for what happened
// (a score response, an outcome, a job, a rule change), so a receiver parses one vocabulary.

import { z } from 'zod';

/** Every event type an endpoint may subscribe to. `webhook.test` is sent only on request. */
export const WEBHOOK_EVENT_TYPES = [
  'decision.review',
  'decision.block',
  'review.decided',
  'outcome.recorded',
  'job.succeeded',
  'job.failed',
  'drift.verdict_changed',
  'rule.changed',
  'case.opened',
  'case.assigned',
  'case.closed',
  'case.sla_breached',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** `outcome.recorded` and `review.decided`: an outcome that changed, as a transaction's record shows it. */
export const OutcomeEvent = z.object({
  transaction_id: z.string(),
  outcome: z.enum(['fraud', 'legit']),
  previous_outcome: z.enum(['fraud', 'legit']).nullable(),
  source: z.string(),
  reported_at: z.string(),
  reported_by: z.string().describe('A user id, or `key:<api key id>`'),
});
export type OutcomeEvent = z.infer<typeof OutcomeEvent>;

/** `rule.changed`: one entry of the rule's history (GET …/rules/{rule_id}/history), with its id. */
export const RuleChangedEvent = z.object({ rule_id: z.string(), at: z.string(), by: z.string(), action: z.string(), detail: z.unknown() });
export type RuleChangedEvent = z.infer<typeof RuleChangedEvent>;

export const WebhookEndpoint = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  status: z.enum(['enabled', 'disabled']),
  disabled_reason: z
    .enum(['disabled_by_user', 'delivery_failing', 'secret_unreadable'])
    .nullable()
    .describe(
      '`delivery_failing`: deliveries failed for three days and the service stopped sending; `secret_unreadable`: SESSION_SECRET changed, rotate the secret',
    ),
  disabled_message: z.string().nullable(),
  disabled_at: z.string().nullable(),
  secret_rotated_at: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable().describe('Until then, deliveries carry a signature by the previous secret too'),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = WebhookEndpoint.extend({ secret: z.string().describe('The signing secret (`whsec_…`): shown this once') });
export type WebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecret>;

export const WebhookEndpointList = z.object({ data: z.array(WebhookEndpoint) });
export type WebhookEndpointList = z.infer<typeof WebhookEndpointList>;

export const WebhookAttempt = z.object({
  attempt: z.number().int(),
  started_at: z.string(),
  duration_ms: z.number(),
  status_code: z.number().int().nullable(),
  error: z
    .string()
    .nullable()
    .describe('Null on success; else `http_status`, `redirect` (not followed), `timeout`, `connection_failed`, `dns_failed`, `address_refused`'),
  response_excerpt: z.string().nullable().describe("The start of the receiver's answer, as text with control characters replaced"),
});

export const WebhookDelivery = z.object({
  id: z.string(),
  event_id: z.string().describe('Also the `webhook-id` header: the same on every attempt and redelivery'),
  event_type: z.string(),
  event_created_at: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.number().int(),
  next_attempt_at: z.string().nullable().describe('Pending only: not before this time'),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  delivered_at: z.string().nullable(),
  created_at: z.string(),
  attempt_log: z.array(WebhookAttempt),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryDetail = WebhookDelivery.extend({ payload: z.unknown().describe("The event's `data`") });
export type WebhookDeliveryDetail = z.infer<typeof WebhookDeliveryDetail>;

export const WebhookDeliveryPage = z.object({ data: z.array(WebhookDelivery), has_more: z.boolean() });
export type WebhookDeliveryPage = z.infer<typeof WebhookDeliveryPage>;

export const WebhookQueued = z.object({ event_id: z.string().optional(), delivery_id: z.string() });
