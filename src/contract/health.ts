// What GET /api/health reports: whether the API, the model, the evaluation, the database and the
// live feed work, and what this process holds (organizations' histories, running jobs, memory).
// app/health.ts makes the report with this type; the route documents and serialises it.

import { z } from 'zod';

/** How the live feed is read, which the feed's description quotes: how often this process reads it
 *  (live/tail.ts) and how long after a read it counts as behind (app/feed-health.ts). Both belong to
 *  layers this one does not load, so the route hands them in. */
export interface FeedTiming {
  pollMs: number;
  behindMs: number;
}

export const healthSchema = (feed: FeedTiming) =>
  z.object({
    status: z.enum(['ok', 'degraded']),
    api: z.literal('ok'),
    model: z.object({
      status: z.enum(['ok', 'unavailable']),
      id: z.string().nullable(),
      version: z.string().nullable(),
      reason: z.string().nullable(),
      message: z.string().nullable(),
    }),
    evaluation: z.object({ status: z.enum(['ok', 'unavailable']), reason: z.string().nullable() }),
    database: z.object({ status: z.enum(['ok', 'unavailable']), kind: z.enum(['pglite', 'postgres']) }),
    feed: z
      .object({
        state: z
          .enum(['current', 'behind'])
          .describe(
            `behind: this process's last successful read of the live feed began over ${feed.behindMs / 1000} s ago (it reads at least every ${feed.pollMs / 1000} s), or the database is unavailable; what other processes record may not count here yet`,
          ),
        lag_ms: z
          .number()
          .int()
          .nonnegative()
          .nullable()
          .describe('How long ago the last successful read began: everything committed before it counts in this process (null before the first)'),
        last_read_at: z.string().nullable().describe('When (ISO 8601) the last successful read began'),
        waiting_on_transactions: z
          .number()
          .int()
          .nonnegative()
          .describe(
            'Database transactions that were running when the feed passed them; their changes are applied when they commit (a transaction held open elsewhere delays only its own changes)',
          ),
        reason: z
          .enum(['database_unavailable', 'reads_late'])
          .nullable()
          .describe('Why the feed is behind: `database_unavailable` while reads fail, `reads_late` while they succeed but too seldom'),
      })
      .describe("This process's tail of the live feed: how current what it holds of other processes' changes is"),
    auth_configured: z.boolean(),
    history_transactions: z.number().int().describe('Transactions in the public sandbox (the example history guests score against)'),
    organizations_loaded: z.number().int().describe('Organizations whose live history this process holds in memory (those it has served since it started)'),
    transactions_held: z
      .number()
      .int()
      .describe("Transactions of those organizations' histories this process holds in memory (their last 31 days, and what it recorded since)"),
    jobs_running: z
      .record(z.string(), z.number().int())
      .describe('Jobs this process is running now, by kind (`score`, `history_import`, `rings`); empty when idle'),
    memory: z
      .object({
        rss_mb: z.number().nonnegative().describe('Resident memory of the process'),
        heap_used_mb: z.number().nonnegative().describe("The main thread's JavaScript heap in use (live objects and garbage not yet collected)"),
        heap_total_mb: z.number().nonnegative().describe("The main thread's JavaScript heap reserved"),
        array_buffers_mb: z.number().nonnegative().describe('ArrayBuffers and Buffers, outside the heap'),
      })
      .describe("This process's memory now (process.memoryUsage(), MB to 0.1): what holding organizations' histories costs"),
    started_at: z.string(),
    startup_ms: z.record(z.string(), z.number()),
  });
export type Health = z.infer<ReturnType<typeof healthSchema>>;
