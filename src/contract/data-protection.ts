// Data protection as the API answers it: an organization's retention period, a customer's records
// exported in one document, a customer's erasure (requested, then listed with what it erased), and
// the audit of all three. A customer is named only in a request and in an export; every answer
// afterwards names it by its keyed hash. The use cases are app/data-protection.ts's.

import { z } from 'zod';
import { CaseDetail } from './cases.ts';
import { ListName } from './rules.ts';
import { storedText } from './stored-text.ts';
import { TransactionRecord } from './transactions.ts';

export const DEFAULT_RETENTION_DAYS = 400;
export const MIN_RETENTION_DAYS = 30;
export const MAX_RETENTION_DAYS = 3650;
/** Lists an erasure may exempt at once. */
export const MAX_KEPT_LISTS = 50;

export const CustomerParam = storedText('customer_id', 200).describe('The customer, as your payments name it (customer_id)');

export const RetentionRequest = z
  .object({
    days: z
      .number({ error: 'days must be a whole number of days' })
      .int('days must be a whole number of days')
      .min(MIN_RETENTION_DAYS, `days is at least ${MIN_RETENTION_DAYS}`)
      .max(MAX_RETENTION_DAYS, `days is at most ${MAX_RETENTION_DAYS}`)
      .describe('How long recorded transactions are kept, in days'),
  })
  .strict();
export type RetentionRequest = z.infer<typeof RetentionRequest>;

export const SweepCounts = z.object({
  transactions: z.number().int(),
  outcome_changes: z.number().int(),
  case_transactions: z.number().int().describe('Places of deleted transactions in cases (the cases stay)'),
  webhook_events: z.number().int(),
  ring_windows: z.number().int(),
});

export const Retention = z.object({
  days: z.number().int().describe('Recorded transactions older than this many days are deleted'),
  default_days: z.literal(DEFAULT_RETENTION_DAYS),
  minimum_days: z.literal(MIN_RETENTION_DAYS),
  maximum_days: z.literal(MAX_RETENTION_DAYS),
  last_sweep: z
    .object({ at: z.string(), cutoff: z.string().describe('What was older than this was deleted'), counts: SweepCounts })
    .nullable()
    .describe('The latest retention sweep of the organization, if any'),
});
export type Retention = z.infer<typeof Retention>;

export const ErasureRequest = z
  .object({
    keep_lists: z
      .array(ListName)
      .max(MAX_KEPT_LISTS)
      .optional()
      .describe(
        'Names of lists whose entries for the customer are kept (lists kept for fraud prevention); every other list value naming the customer is erased',
      ),
  })
  .strict();
export type ErasureRequest = z.infer<typeof ErasureRequest>;

export const ErasureCounts = z.object({
  transactions: z.number().int(),
  outcome_changes: z.number().int(),
  list_items: z.number().int(),
  cases: z.number().int().describe('Cases about the customer, deleted whole'),
  case_transactions: z.number().int().describe("The customer's transactions taken out of other cases"),
  case_entries_redacted: z.number().int().describe("Timeline entries of other cases rewritten without the customer's id"),
  audit_entries_redacted: z.number().int().describe("Entries of the lists' audit rewritten without the customer's id (but the exempted lists')"),
  webhook_events: z.number().int(),
  rings: z.number().int(),
  totals: z.number().int().describe("Totals adjusted (the customer's own, its merchants', channels' and key values')"),
  uses: z.number().int(),
});

export const ErasureAccepted = z.object({
  id: z.string(),
  status: z.enum(['pending', 'done']),
});
export type ErasureAccepted = z.infer<typeof ErasureAccepted>;

export const Erasure = ErasureAccepted.extend({
  customer_hash: z
    .string()
    .describe("A keyed hash of the customer's id (HMAC-SHA-256 with the server's secret): proves which customer to whoever knows the id"),
  requested_by: z.string().describe('A user id, or key:<id> for an API key'),
  requested_at: z.string(),
  done_at: z.string().nullable(),
  keep_lists: z.array(z.string()),
  counts: ErasureCounts.nullable().describe('What was erased, once done'),
  kept: z
    .array(z.object({ list: z.string(), reason: z.string().nullable().describe('The reason the entry was added with') }))
    .nullable()
    .describe('List entries kept because the request exempted their lists, once done'),
});
export type Erasure = z.infer<typeof Erasure>;

export const ErasureList = z.object({ data: z.array(Erasure), has_more: z.boolean() });
export type ErasureList = z.infer<typeof ErasureList>;

export const DataProtectionAudit = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      at: z.string(),
      by: z.string().describe('A user id, key:<id> for an API key, or system for the sweep and the erasures it runs'),
      action: z.enum(['retention_changed', 'retention_swept', 'customer_exported', 'erasure_requested', 'erasure_done']),
      detail: z.record(z.string(), z.unknown()).describe('What changed, or what was deleted; a customer only by its keyed hash'),
    }),
  ),
  has_more: z.boolean(),
});
export type DataProtectionAudit = z.infer<typeof DataProtectionAudit>;

export const CustomerExport = z.object({
  organization_id: z.string(),
  customer_id: z.string(),
  exported_at: z.string(),
  transactions: z.array(TransactionRecord).describe('Every recorded transaction of the customer, oldest first, with its decision, outcome and outcome history'),
  lists: z
    .array(
      z.object({
        list: z.string(),
        kind: z.string(),
        value: z.string(),
        added_at: z.string(),
        added_by: z.string(),
        reason: z.string().nullable(),
        expires_at: z.string().nullable(),
        removed_at: z.string().nullable(),
      }),
    )
    .describe('Entries naming the customer in lists of customer ids or of text, current and past'),
  cases: z.array(CaseDetail).describe('Cases about the customer, and cases holding one of its transactions'),
  webhook_events: z.array(z.object({ id: z.string(), type: z.string(), created_at: z.string(), payload: z.unknown() })),
  totals: z
    .object({
      transactions: z.number(),
      amount_sum: z.number(),
      last_at: z.string(),
      labels: z.number(),
      frauds: z.number(),
      first_fraud_known_at: z.string().nullable(),
    })
    .nullable()
    .describe("The customer's all-time totals as the features count them"),
  uses: z
    .array(z.object({ kind: z.enum(['merchant', 'channel', 'location']), key: z.string(), first_at: z.string() }))
    .describe('When the customer first used each merchant, channel and location'),
});
export type CustomerExport = z.infer<typeof CustomerExport>;
