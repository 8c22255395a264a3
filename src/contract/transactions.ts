// An organization's decision log as both surfaces answer it (an API key, and a member from the
// dashboard): a recorded transaction with its decision, outcome and evidence, a page of them, the
// statuses of a bulk outcome report, and a customer's or merchant's summary. A record repeats parts
// of the score's answer (contract/score.ts), so a recorded decision reads as it was answered.

import { z } from 'zod';
import { MODE_NAMES } from '../model/bundle-types.ts';
import { Channels, Reason, RuleMatch, ScoreResponse } from './score.ts';

export const OutcomeLabel = z.enum(['fraud', 'legit']);
export type OutcomeLabel = z.infer<typeof OutcomeLabel>;

export const TransactionRecord = z.object({
  transaction_id: z.string(),
  time: z.string().describe('When the transaction was scored or happened (ISO 8601 UTC)'),
  amount: z.number(),
  customer_id: z.string(),
  merchant_id: z.string(),
  location: z.string(),
  payment_type: z.string(),
  source: z.enum(['scored', 'import']).describe('`scored` through an API key, or `import`ed as history (no decision)'),
  risk_score: z.number().nullable(),
  risk_band: z.enum(['low', 'medium', 'high', 'critical']).nullable(),
  decision: z.enum(['approve', 'review', 'block']).nullable(),
  mode: z.enum(MODE_NAMES).nullable(),
  model_id: z.string().nullable(),
  model_version: z.string().nullable(),
  path: z.enum(['MODEL', 'COLD_START']).nullable(),
  review_threshold: z.number().nullable(),
  block_threshold: z.number().nullable(),
  channel_scores: Channels.nullable(),
  channel_attribution: Channels.nullable(),
  reasons: z.array(Reason),
  rules: z.array(RuleMatch).describe('The rules that matched when it was scored; `applied`: it made the decision'),
  notes: z.array(z.string()).describe("The answer's notes: a rule that changed the decision, a value that was missing"),
  latency_ms: z.number().nullable(),
  fields: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .describe("The organization's own fields it was sent with, declared or not ({} when none)"),
  outcome: z
    .object({
      outcome: OutcomeLabel,
      source: z.string(),
      reported_at: z.string(),
      reported_by: z.string().describe('A user id, `key:<api key id>`, or `import:<job id>`'),
    })
    .nullable()
    .describe('The current outcome; null while unknown'),
  outcome_history: z
    .array(z.object({ from: OutcomeLabel.nullable(), to: OutcomeLabel, source: z.string(), reported_at: z.string(), reported_by: z.string() }))
    .optional()
    .describe('Every reported change, oldest first (on a single record, not in listings)'),
  challengers: z
    .array(
      z.object({
        model_id: z.string(),
        risk_score: z.number(),
        decision: z.enum(['approve', 'review', 'block']).describe("The challenger model's own decision (the organization's rules aside)"),
      }),
    )
    .optional()
    .describe('What the challengers scoring in shadow made of it when it was scored (on a single record; never in the answer)'),
  evidence: ScoreResponse.pick({ entity_history: true, field_history: true, graph_evidence: true, related_ring: true })
    .nullable()
    .optional()
    .describe(
      "What the answer showed when it was scored: entity history, the key values' histories (when it carried any), graph evidence and the related ring (on a single record; null for an imported transaction)",
    ),
});
export type TransactionRecord = z.infer<typeof TransactionRecord>;

export const TransactionPage = z.object({ data: z.array(TransactionRecord), has_more: z.boolean() });
export type TransactionPage = z.infer<typeof TransactionPage>;

export const BulkResult = z.object({
  results: z.array(z.object({ transaction_id: z.string(), status: z.enum(['applied', 'not_found', 'invalid']), message: z.string().optional() })),
});
export type BulkResult = z.infer<typeof BulkResult>;

export const Entity = z.object({
  role: z.enum(['customer', 'merchant', 'key']).describe("`key`: a value of one of the organization's key fields (`field` names it)"),
  id: z.string(),
  field: z.string().optional().describe('The key field, for a key value'),
  totals: z
    .object({
      transactions: z.number().int(),
      amount_sum: z.number(),
      last_time: z.string(),
      labelled: z.number().int().describe('With an outcome reported'),
      fraud: z.number().int(),
    })
    .describe('All time'),
  recent: z
    .object({ transactions: z.number().int(), first_time: z.string().nullable(), reviewed: z.number().int(), blocked: z.number().int() })
    .describe('Over its latest transactions'),
  counterparties: z.array(
    z.object({
      role: z.enum(['customer', 'merchant']),
      id: z.string(),
      transactions: z.number().int(),
      amount_sum: z.number(),
      labelled: z.number().int(),
      fraud: z.number().int(),
      last_time: z.string(),
    }),
  ),
});
export type Entity = z.infer<typeof Entity>;
