// Custom models: an organization's own version of the built-in model, made from the
// command line (tools/model-create.ts). It keeps the built-in boosters, features and calibration and sets
// its own stack weights and bias, decision thresholds per mode, and risk bands. The settings given
// are merged with the base's at creation and stored complete, so a model never changes once made;
// scoring with it is the base bundle with those values replaced (`applySettings`).

import { z } from 'zod';
import { CHANNELS } from '../domain/channels.ts';
import { MODE_NAMES, type ModelBundle, type ModelFile } from './bundle-types.ts';
import { prepareReference } from './drift.ts';

const Probability = z.number().min(0).max(1);
const ModeThresholds = z.object({ review: Probability, block: Probability }).refine((t) => t.review <= t.block, 'review must not be above block');

/** Settings as given: any part may be left out (the base's value is kept). */
export const CustomSettingsInput = z
  .object({
    stack: z.object({ bias: z.number().finite().optional(), weights: z.object(Object.fromEntries(CHANNELS.map((c) => [c, z.number().finite().min(0).max(10).optional()]))).strict().optional() }).strict().optional(),
    thresholds: z.object(Object.fromEntries(MODE_NAMES.map((m) => [m, z.object({ review: Probability.optional(), block: Probability.optional() }).strict().optional()]))).strict().optional(),
    bands: z.object({ medium: Probability.optional(), high: Probability.optional(), critical: Probability.optional() }).strict().optional(),
  })
  .strict();
export type CustomSettingsInput = z.infer<typeof CustomSettingsInput>;

/** Settings as stored: complete. */
export const CustomSettings = z.object({
  stack: z.object({ bias: z.number(), weights: z.object({ tabular: z.number(), behavioral: z.number(), velocity: z.number(), graph: z.number() }) }),
  thresholds: z.object({ balanced: ModeThresholds, high_precision: ModeThresholds, high_recall: ModeThresholds }),
  bands: z.object({ medium: Probability, high: Probability, critical: Probability }).refine((b) => b.medium <= b.high && b.high <= b.critical, 'bands must rise: medium ≤ high ≤ critical'),
  /** Its own Platt calibration (a model recalibrated on an organization's outcomes); else the base's. */
  calibration: z.object({ method: z.literal('platt'), bias: z.number(), slope: z.number() }).optional(),
});
export type CustomSettings = z.infer<typeof CustomSettings>;

/** The base model's values with the given ones laid over them, checked whole. */
export function mergeSettings(base: ModelFile, input: CustomSettingsInput): CustomSettings {
  const thresholds = Object.fromEntries(MODE_NAMES.map((m) => [m, { review: input.thresholds?.[m]?.review ?? base.thresholds[m].review, block: input.thresholds?.[m]?.block ?? base.thresholds[m].block }]));
  return CustomSettings.parse({
    stack: { bias: input.stack?.bias ?? base.stack.bias, weights: { ...base.stack.weights, ...Object.fromEntries(Object.entries(input.stack?.weights ?? {}).filter(([, v]) => v !== undefined)) } },
    thresholds,
    bands: { ...base.bands, ...Object.fromEntries(Object.entries(input.bands ?? {}).filter(([, v]) => v !== undefined)) },
  });
}

export interface CustomModel {
  id: string;
  organization_id: string;
  name: string;
  base_model_id: string;
  settings: CustomSettings;
  active: boolean;
  created_at: Date;
  activated_at: Date | null;
  /** Scores every API-key request in shadow beside the active model (never both). */
  challenger: boolean;
}

/** The bundle to score with: the base's boosters with the custom model's values. */
export function applySettings(base: ModelBundle, m: CustomModel): ModelBundle {
  const f = base.file;
  const thresholds = Object.fromEntries(MODE_NAMES.map((mode) => [mode, { ...f.thresholds[mode], review: m.settings.thresholds[mode].review, block: m.settings.thresholds[mode].block }])) as ModelFile['thresholds'];
  const bundle: ModelBundle = {
    channels: base.channels,
    file: { ...f, id: m.id, version: `${f.version}+${m.id}`, stack: m.settings.stack, thresholds, bands: m.settings.bands, calibration: m.settings.calibration ?? f.calibration },
  };
  // Its own weights and calibration give its own validation score distribution.
  if (base.reference) bundle.reference = prepareReference(base.reference.file, bundle, base.reference.test);
  return bundle;
}
