// A model's drift reference (reference.json in its folder, made by `npm run train`): what its
// training and validation data looked like, per feature and per category, and a sample of
// validation rows' channel scores; and the same made ready to count rows against for one bundle
// (drift.ts prepares it). Apart from drift.ts so that a loaded model can hold its reference
// without the model's types depending on the code that counts and reports drift.

import { z } from 'zod';
import type { FeatureDependence } from '../domain/features/extract.ts';

export const CATEGORY_FIELDS = ['payment_type', 'location'] as const;
export type CategoryField = (typeof CATEGORY_FIELDS)[number];

const Bins = z.object({ edges: z.array(z.number()), shares: z.array(z.number()) });
export const ReferenceFileSchema = z.object({
  model_id: z.string(),
  split: z.literal('validation'),
  rows: z.number().int().positive(),
  features: z.array(
    Bins.extend({
      feature: z.string(),
      channel: z.string(),
      /** Share of reference rows where the feature was missing (NaN). */
      missing: z.number(),
      /** The range seen in training and validation (null: always missing). */
      min: z.number().nullable(),
      max: z.number().nullable(),
      /** Share of the model's mean absolute contribution on validation. */
      importance: z.number(),
    }),
  ),
  categories: z.object({ payment_type: z.record(z.string(), z.number()), location: z.record(z.string(), z.number()) }),
  /** Evenly spaced validation rows: each channel's raw score (channels in model order), and whether the cold-start rule held. */
  score_sample: z.object({ raw: z.array(z.array(z.number())), cold: z.array(z.union([z.literal(0), z.literal(1)])) }),
});
export type ReferenceFile = z.infer<typeof ReferenceFileSchema>;

/** The model's own figures on its test split (metrics.json), which measured performance is held
 *  to: average precision and calibration error with their bootstrap intervals. */
export interface TestFigures {
  average_precision: number;
  average_precision_interval: [number, number];
  expected_calibration_error_interval: [number, number];
}

/** A reference ready to count against for one bundle: each feature's place in the channel
 *  matrices, what it depends on and whether it can decide the verdict, the bundle's own validation
 *  score shares over the intervals in which its answers differ, and its test figures. */
export interface DriftReference {
  file: ReferenceFile;
  features: (ReferenceFile['features'][number] & { dependsOn: FeatureDependence; inVerdict: boolean })[];
  /** Each channel's number of features (its matrix's row width), in the bundle's channel order,
   *  and all of them together (a stored row's length). */
  widths: number[];
  total: number;
  /** The same per feature as flat arrays, for counting rows without touching objects. */
  flat: {
    channel: Int32Array;
    column: Int32Array;
    offset: Int32Array;
    /** Where each feature's edges start in `edges` (one more entry: the end). */
    edgeStart: Int32Array;
    edges: Float64Array;
    /** Where each feature's bins start in a counter's counts (one more entry: the total). */
    binStart: Int32Array;
    /** The range seen in training (±∞ when always missing). */
    min: Float64Array;
    max: Float64Array;
    inVerdict: Uint8Array;
  };
  categories: Record<CategoryField, Set<string>>;
  /** Score bins: bin k holds scores below edges[k] (and at or above the edge before it). */
  score: { edges: number[]; shares: number[] };
  /** Absent when the model folder has no readable evaluation. */
  test?: TestFigures;
}
