// What a score is asked and what it answers (POST /api/risk/score, POST /api/v1/risk/score), the
// one definition of both from the route down to the scorer, and the parts of the answer a
// recorded transaction repeats (the channels' figures, the reasons, the rules that matched), with
// what the score form suggests (GET /api/risk/known-values). The routes document and serialise these;
// the use cases and the dashboard take their types from here, so the three cannot drift apart.

import { z } from 'zod';
import { AMOUNT_DECIMALS, keptAmount } from '../domain/amount.ts';
import { MODE_NAMES, perChannel } from '../model/bundle-types.ts';
import { MAX_FIELD_TEXT, MAX_SENT_FIELDS } from '../domain/fields.ts';
import { NO_NUL, storedText } from './stored-text.ts';

const id = (what: string) => storedText(what, 200);

/** A score request: a transaction whose id, location and payment type may be left out. */
export const ScoreRequest = z
  .object({
    amount: z
      .number({ error: 'amount must be a number' })
      .finite()
      .min(0, 'amount must not be negative')
      .max(1e12, 'amount is implausibly large')
      .transform(keptAmount)
      .describe(`In the currency unit, kept to ${AMOUNT_DECIMALS} decimal places`),
    customer_id: id('customer_id').describe('Identifies the payer'),
    merchant_id: id('merchant_id').describe('Identifies the payee'),
    transaction_id: id('transaction_id').optional().describe("Caller's reference; generated when omitted"),
    location: storedText('location', 200).optional().describe('Recorded as `unknown` when omitted'),
    payment_type: storedText('payment_type', 100).optional().describe('Recorded as `unknown` when omitted'),
    mode: z.enum(MODE_NAMES).default('balanced').describe('Thresholds to decide with'),
    explain: z.boolean().default(true).describe('Include the explanation (reasons)'),
    fields: z
      .record(
        z.string().min(1).max(100).regex(NO_NUL, 'a field name must not contain a NUL character'),
        z.union([
          z
            .string()
            .max(MAX_FIELD_TEXT, `a field's text is at most ${MAX_FIELD_TEXT} characters`)
            .regex(NO_NUL, "a field's text must not contain a NUL character"),
          z.number().finite(),
          z.boolean(),
        ]),
      )
      .refine((f) => Object.keys(f).length <= MAX_SENT_FIELDS, `at most ${MAX_SENT_FIELDS} fields`)
      .optional()
      .describe(
        "The organization's own fields (POST /api/organizations/{id}/fields declares them): a declared field's value must have its type; a field not declared is stored and named in `notes`. A card number or an IP address is never accepted (422 `card_number_refused`, `ip_address_refused`). The public sandbox reads none.",
      ),
  })
  .strict();
/** A score request as validated (amount kept to its decimals, mode and explain defaulted). */
export type ScoreInput = z.output<typeof ScoreRequest>;

/** One number per channel (scores, attribution). */
export const Channels = z.object(perChannel(z.number()));
export type Channels = z.infer<typeof Channels>;
/** One reason of a decision (src/scoring/explain.ts). */
export const Reason = z.object({ text: z.string(), direction: z.enum(['increases', 'decreases']), contribution: z.number(), feature: z.string() });
export type Reason = z.infer<typeof Reason>;

export const RuleMatch = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().int(),
  action: z.enum(['allow', 'block', 'review']),
  status: z.enum(['active', 'shadow']),
  applied: z.boolean(),
});
export type RuleMatch = z.infer<typeof RuleMatch>;

export const ScoreResponse = z.object({
  transaction_id: z.string(),
  risk_score: z.number().describe('Calibrated probability of fraud'),
  risk_band: z.enum(['low', 'medium', 'high', 'critical']),
  decision: z.enum(['approve', 'review', 'block']),
  mode: z.enum(MODE_NAMES),
  model_id: z.string(),
  model_version: z.string(),
  path: z.enum(['MODEL', 'COLD_START']),
  rules: z
    .array(RuleMatch)
    .optional()
    .describe(
      'Every rule of the organization that matched, in name order (`POST /api/v1/risk/score` only: the public sandbox has no rules). `applied`: it made the decision (an active rule of the deciding action); shadow rules are recorded, never applied.',
    ),
  review_threshold: z.number(),
  block_threshold: z.number(),
  channel_scores: Channels.describe("Calibrated probability from each channel's evidence, the others at their average"),
  channel_attribution: Channels.describe("Each channel's signed share of how far the stacked log-odds moved from the average"),
  reasons: z.array(Reason),
  entity_history: z.record(
    z.string(),
    z.object({ role: z.enum(['customer', 'merchant', 'channel']), prior_transactions: z.number().int(), is_new: z.boolean() }),
  ),
  field_history: z
    .record(
      z.string(),
      z.object({
        prior_transactions: z.number().int(),
        is_new: z.boolean(),
        count_1h: z.number().int(),
        count_24h: z.number().int(),
        count_7d: z.number().int(),
        amount_24h: z.number(),
        distinct_customers_24h: z.number().int(),
        distinct_customers_30d: z.number().int(),
      }),
    )
    .optional()
    .describe(
      "By key field (`POST /api/v1/risk/score` only, when the payment carried a key field of the organization's): that value's earlier transactions in the organization, strictly before this one, as rules read them (`field_history.<name>`): all-time count and whether it is new, counts over 1 h, 24 h and 7 days, the amount over 24 h, and the distinct customers over 24 h and 30 days",
    ),
  graph_evidence: z.record(
    z.string(),
    z.array(
      z.object({
        transaction_id: z.string(),
        time: z.string(),
        amount: z.number(),
        source: z.string(),
        target: z.string(),
        relation: z.enum(['same_customer', 'same_merchant', 'same_channel']),
        outcome: z.enum(['fraud', 'legit', 'unknown']),
      }),
    ),
  ),
  related_ring: z
    .object({
      ring_id: z.string(),
      window_start: z.string(),
      window_end: z.string(),
      matched_entity: z.string(),
      role: z.enum(['merchant', 'channel']),
      members: z.number().int(),
      fraud_rate: z.number(),
    })
    .nullable(),
  stages: z.array(z.object({ name: z.string(), ms: z.number() })),
  latency_ms: z.number(),
  notes: z.array(z.string()),
});
export type ScoreResponse = z.infer<typeof ScoreResponse>;

export const KnownValues = z.object({
  model_id: z.string(),
  payment_types: z.array(z.string()).describe('Coded by the tabular channel; any other payment type is scored as missing'),
  locations: z.array(z.string()).describe("The places of the model's training data, alphabetical; any other location is new to every customer of the sandbox"),
  sandbox_as_of: z.string().describe('The moment (ISO 8601, UTC) the public sandbox scores at'),
});
export type KnownValues = z.infer<typeof KnownValues>;
