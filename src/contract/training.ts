// What GET /api/training/limits answers: the limits a training request is checked against
// (app/datasets/training-jobs.ts) and whether training through the API is built at all; and what
// POST /api/training/jobs would have run from an organization's own data (its 501's
// `detail.would_run`, app/organization-training.ts).

import { z } from 'zod';

const Count = z.number().int().nonnegative();

export const TrainingLimits = z.object({
  max_training_rows: Count,
  max_upload_mb: Count,
  max_jobs_per_org_per_day: Count,
  requires: z.array(z.string()),
  training_available: z.boolean(),
  note: z.string(),
  features: z.record(z.string(), Count).describe('Channel → how many features it has'),
});
export type TrainingLimits = z.infer<typeof TrainingLimits>;

/** How an organization's transactions are split and counted for a model of its own
 *  (training/organization.ts Counts). */
export const TrainingCounts = z.object({
  transactions: Count,
  frauds: Count,
  train: Count.optional().describe('Boosters of its own: the rows the added trees learn from'),
  validation: Count.optional().describe('Boosters of its own: the rows their number is chosen on'),
  calibration: Count.describe('The rows before the test part, which the measured calibration is fitted on'),
  test: Count,
  test_frauds: Count,
});

/** What training from an organization's own data would run, once every check has passed. */
export const OrganizationTrainingPlan = z.object({
  source: z.literal('organization'),
  organization_id: z.string(),
  name: z.string().nullable(),
  kind: z.enum(['recalibrated', 'own_boosters']),
  as_of: z.string(),
  transactions: z.object({
    scored: Count,
    imported: Count,
    first: z.string().nullable(),
    last: z.string().nullable(),
  }),
  counts: TrainingCounts,
  command: z.string().describe('The command that trains it, where the server runs'),
});
export type OrganizationTrainingPlan = z.infer<typeof OrganizationTrainingPlan>;
