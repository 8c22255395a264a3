// What GET /api/training/limits answers: the limits a training request is checked against
// (app/datasets/training-jobs.ts) and whether training through the API is built at all.

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
