// Models as the model routes answer them: the built-in model (public) and the custom models of the
// caller's organizations, listed, read one at a time, activated and deactivated. The routes document
// each answer only as "an object" (a custom model's settings are stored as the organization wrote
// them), so the types below say what they hold, in the model's own terms (model/); the functions
// that shape them (app/model-views.ts) are held to them by the compiler.

import { z } from 'zod';
import type { Channel } from '../domain/channels.ts';
import { MODE_NAMES, type ModelFile } from '../model/bundle-types.ts';
import type { CustomModel } from '../model/custom.ts';

/** What every model route documents: an object. */
export const ModelObject = z.record(z.string(), z.unknown());

/** The built-in model, as `GET /api/models` lists it. */
export type BuiltInModelSummary = {
  id: string;
  version: string;
  kind: 'built_in';
  active: boolean;
  organization_id: null;
  trained_on: string;
  rows: number;
  channels: Channel[];
  weights: ModelFile['stack']['weights'];
};
/** A custom model, as `GET /api/models` lists it and activating or deactivating it answers. */
export type CustomModelSummary = {
  id: string;
  name: string;
  kind: 'custom';
  active: boolean;
  organization_id: string;
  base_model_id: string;
  weights: CustomModel['settings']['stack']['weights'];
  created_at: string;
  activated_at: string | null;
  /** Scores every API-key request in shadow (recorded, never answered). */
  challenger: boolean;
  /** Whose boosters it scores with: its base model's, or its own (trained on its organization's
   *  outcomes, `npm run train -- --organization`). */
  boosters: 'built_in' | 'own';
};
export type ModelSummary = BuiltInModelSummary | CustomModelSummary;
export type ModelList = { models: ModelSummary[] };

/** Each risk band's score interval, [from, to). */
export type Bands = Record<'low' | 'medium' | 'high' | 'critical', number[]>;
/** `GET /api/models/{id}`: the built-in model with its weights, calibration, thresholds, bands, features
 *  and training, or a custom model with its own settings. */
export type ModelDetail =
  | (BuiltInModelSummary & {
      stack: ModelFile['stack'] & { formula: string };
      calibration: ModelFile['calibration'];
      cold_start: ModelFile['cold_start'];
      thresholds: ModelFile['thresholds'];
      bands: Bands;
      features: Record<string, string[]>;
      training: ModelFile['training'];
      data_fingerprint: string;
      code_fingerprint: string;
    })
  | (CustomModelSummary & {
      stack: CustomModel['settings']['stack'];
      thresholds: CustomModel['settings']['thresholds'];
      bands: Bands;
      /** Its own calibration (recalibrated or trained), else the base model's. */
      calibration: ModelFile['calibration'];
      cold_start: ModelFile['cold_start'];
      /** The SHA-256 of its own boosters' texts; null when it scores with the base model's. */
      boosters_sha256: string | null;
    });

const AuditAction = z.enum(['promoted', 'rolled_back', 'deactivated', 'challenger_added', 'challenger_removed']);
/** `POST /api/organizations/{id}/models/rollback`: the model that scores now (null: the built-in) and the one it replaced. */
export const RollBack = z.object({
  model_id: z.string().nullable().describe('The model active now; null: the built-in model'),
  previous_model_id: z.string().nullable(),
});
export type RollBack = z.infer<typeof RollBack>;
/** `GET /api/organizations/{id}/models/audit`. */
export const ModelAudit = z.object({
  data: z.array(
    z.object({
      at: z.string(),
      by: z.string(),
      action: AuditAction,
      model_id: z.string().nullable().describe('null: the built-in model'),
      previous_model_id: z.string().nullable(),
    }),
  ),
});
export type ModelAudit = z.infer<typeof ModelAudit>;

const Interval = z
  .object({ value: z.number().nullable(), low: z.number().nullable(), high: z.number().nullable() })
  .describe('The figure on the sample and its 95 % paired bootstrap interval (null: not defined, e.g. no fraud)');
const Figure = z.object({
  active: Interval,
  challenger: Interval,
  difference: Interval.describe('Challenger minus active'),
  favours: z.enum(['challenger', 'active']).nullable().describe('Which model the interval of the difference favours; null: it includes no difference'),
});
const Comparison = z.object({
  transactions: z.number().int(),
  frauds: z.number().int(),
  average_precision: Figure.nullable(),
  roc_auc: Figure.nullable(),
  card_precision_at_k: Figure.extend({ k: z.number().int() })
    .nullable()
    .describe("Of the k cards with the highest score each day, the share with a fraud that day (the handbook's figure; cards resampled)"),
  calibration_error: Figure.describe('Expected calibration error over 10 bins: lower is better'),
  decisions_changed: z.object({
    count: z.number().int(),
    share: z.number(),
    by_change: z.record(z.string(), z.number().int()).describe('`active->challenger` decision pairs, e.g. `approve->block`'),
  }),
  money: z.object({
    fraud_blocked: Figure.describe('Amount of fraud each would block'),
    legit_blocked: Figure.describe('Amount of legitimate payments each would block: lower is better'),
  }),
  verdict: z.enum(['better', 'no_difference', 'worse']),
  evidence: z.array(z.string()).describe('The figures that decided the verdict, each difference with its interval'),
});
/** A challenger against the active model over the organization's imported history, not live traffic. */
const Backtest = z
  .object({
    kind: z.literal('backtest').describe('Always `backtest`: scored after the fact over imported history, not in shadow on live traffic'),
    note: z.string().describe('What the backtest is and why it can flatter a model, in words'),
    active_model_id: z
      .string()
      .describe("The model that answers the organization's traffic now, scored beside the challenger (the built-in model's id, or the active custom model's)"),
    mode: z.enum(MODE_NAMES).describe("The thresholds both models' decisions are taken with: the API's default mode"),
    from: z.string().describe('The time of the oldest transaction scored'),
    to: z.string().describe('The time of the newest transaction scored'),
    transactions: z.number().int().describe('How many imported transactions were scored: the most recent ones older than the label delay, at most `row_limit`'),
    row_limit: z.number().int().describe('The most transactions a backtest scores'),
    limited: z.boolean().describe('Whether older imported transactions were left out to keep within `row_limit`'),
    comparison: Comparison,
  })
  .describe(
    "The challenger and the active model scored now, from the features stored for each imported transaction (computed by the import's replay, as of the transaction's own time) with the outcomes known now; the same figures, intervals and verdict as `overall`",
  );
/** `GET /api/organizations/{id}/challengers/report`. */
export const ChallengerReport = z.object({
  organization_id: z.string(),
  generated_at: z.string(),
  evaluated_from: z.string(),
  evaluated_until: z.string().describe('Transactions before this time count: now minus the label delay, so that their frauds could be reported'),
  label_delay_days: z.number(),
  challengers: z.array(
    z.object({
      model_id: z.string(),
      active_model_ids: z.array(z.string()).describe("The models that answered while it was in shadow (the built-in model's id, or a custom model's)"),
      overall: Comparison.nullable(),
      weeks: z.array(Comparison.extend({ week: z.string() })),
      backtest: Backtest.nullable().describe(
        'A backtest over the imported span, beside the live comparison above; null when the organization has no imported transaction with features older than the label delay, the model is no longer a challenger, or it cannot be loaded',
      ),
    }),
  ),
});
export type ChallengerReport = z.infer<typeof ChallengerReport>;
