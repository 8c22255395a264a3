// Custom models: an organization's own version of the built-in model, made from the command line
// (tools/model-create.ts, or trained on its outcomes: npm run train -- --organization). It keeps
// the built-in features and sets its own stack weights and bias, decision thresholds per mode and
// risk bands; one trained on the organization's outcomes also has its own calibration and maybe its
// own boosters (stored beside it, named here by their digest). The settings are stored complete, so
// a model never changes once made; scoring with it is the base bundle with those values (and
// boosters) replaced (`applySettings`, `customBundle`).

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CHANNELS } from '../domain/channels.ts';
import { MODE_NAMES, type LoadedChannel, type ModelBundle, type ModelFile } from './bundle-types.ts';
import { loadChannel } from './bundle.ts';
import { prepareReference } from './drift.ts';

const Probability = z.number().min(0).max(1);
const ModeThresholds = z.object({ review: Probability, block: Probability }).refine((t) => t.review <= t.block, 'review must not be above block');

/** Settings as given: any part may be left out (the base's value is kept). */
export const CustomSettingsInput = z
  .object({
    stack: z
      .object({
        bias: z.number().finite().optional(),
        weights: z
          .object(Object.fromEntries(CHANNELS.map((c) => [c, z.number().finite().min(0).max(10).optional()])))
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    thresholds: z
      .object(Object.fromEntries(MODE_NAMES.map((m) => [m, z.object({ review: Probability.optional(), block: Probability.optional() }).strict().optional()])))
      .strict()
      .optional(),
    bands: z.object({ medium: Probability.optional(), high: Probability.optional(), critical: Probability.optional() }).strict().optional(),
  })
  .strict();
export type CustomSettingsInput = z.infer<typeof CustomSettingsInput>;

/** Settings as stored: complete. */
export const CustomSettings = z.object({
  stack: z.object({ bias: z.number(), weights: z.object({ tabular: z.number(), behavioral: z.number(), velocity: z.number(), graph: z.number() }) }),
  thresholds: z.object({ balanced: ModeThresholds, high_precision: ModeThresholds, high_recall: ModeThresholds }),
  bands: z
    .object({ medium: Probability, high: Probability, critical: Probability })
    .refine((b) => b.medium <= b.high && b.high <= b.critical, 'bands must rise: medium ≤ high ≤ critical'),
  /** Its own Platt calibration (a model recalibrated on an organization's outcomes); else the base's. */
  calibration: z.object({ method: z.literal('platt'), bias: z.number(), slope: z.number() }).optional(),
  /** Its own boosters (trained on an organization's outcomes, stored beside it), named by the
   *  SHA-256 of their texts in channel order; else the base's. */
  boosters: z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), trees: z.number().int().positive() }).optional(),
});
export type CustomSettings = z.infer<typeof CustomSettings>;

/** The base model's values with the given ones laid over them, checked whole. */
export function mergeSettings(base: ModelFile, input: CustomSettingsInput): CustomSettings {
  const thresholds = Object.fromEntries(
    MODE_NAMES.map((m) => [
      m,
      { review: input.thresholds?.[m]?.review ?? base.thresholds[m].review, block: input.thresholds?.[m]?.block ?? base.thresholds[m].block },
    ]),
  );
  return CustomSettings.parse({
    stack: {
      bias: input.stack?.bias ?? base.stack.bias,
      weights: { ...base.stack.weights, ...Object.fromEntries(Object.entries(input.stack?.weights ?? {}).filter(([, v]) => v !== undefined)) },
    },
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

/** The bundle to score with: the base's boosters (or `own`, the model's own, loaded) with the
 *  custom model's values. A model with its own boosters has no drift reference: the base's
 *  validation sample was scored by the base's trees. */
export function applySettings(base: ModelBundle, m: CustomModel, own?: LoadedChannel[]): ModelBundle {
  const f = base.file;
  const thresholds = Object.fromEntries(
    MODE_NAMES.map((mode) => [mode, { ...f.thresholds[mode], review: m.settings.thresholds[mode].review, block: m.settings.thresholds[mode].block }]),
  ) as ModelFile['thresholds'];
  const bundle: ModelBundle = {
    channels: own ?? base.channels,
    file: {
      ...f,
      id: m.id,
      version: `${f.version}+${m.id}`,
      stack: m.settings.stack,
      thresholds,
      bands: m.settings.bands,
      calibration: m.settings.calibration ?? f.calibration,
    },
  };
  // Its own weights and calibration give its own validation score distribution.
  if (base.reference && !own) bundle.reference = prepareReference(base.reference.file, bundle, base.reference.test);
  return bundle;
}

/** The digest that names a model's own boosters: SHA-256 over their texts in the channels' order. */
export function boostersDigest(texts: readonly string[]): string {
  const h = createHash('sha256');
  for (const t of texts) h.update(`${t.length}:`).update(t);
  return h.digest('hex');
}

/** The bundle a custom model scores with: its own boosters (`texts`, by channel, as stored) loaded
 *  and checked against the digest its settings name, else the base's; or why it cannot be. */
export function customBundle(base: ModelBundle, m: CustomModel, texts: ReadonlyMap<string, string>): ModelBundle | string {
  if (!m.settings.boosters) return applySettings(base, m);
  const ordered = base.channels.map((c) => texts.get(c.name));
  if (ordered.some((t) => t === undefined) || boostersDigest(ordered as string[]) !== m.settings.boosters.sha256)
    return `its stored boosters are missing or not the ones it was made with`;
  const own: LoadedChannel[] = [];
  for (const [k, c] of base.channels.entries()) {
    const loaded = loadChannel(c.name, c.features, ordered[k]!);
    if (typeof loaded === 'string') return `its ${c.name} booster ${loaded}`;
    own.push(loaded);
  }
  return applySettings(base, m, own);
}
