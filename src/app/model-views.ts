// Models as the API answers them (contract/models.ts): the built-in model's summary and detail, a
// custom model's summary and detail. A custom model says whose boosters it scores with (the base's,
// or its own, trained on its organization's outcomes) and shows the calibration it applies: its
// own when it was recalibrated or trained, else the base's.

import type { ModelBundle } from '../model/bundle-types.ts';
import type { CustomModel } from '../model/custom.ts';
import type { Bands, BuiltInModelSummary, CustomModelSummary, ModelDetail } from '../contract/models.ts';

const bandsOf = (b: { medium: number; high: number; critical: number }): Bands => ({
  low: [0, b.medium],
  medium: [b.medium, b.high],
  high: [b.high, b.critical],
  critical: [b.critical, 1],
});

export function builtInSummary(m: ModelBundle): BuiltInModelSummary {
  const f = m.file;
  return {
    id: f.id,
    version: f.version,
    kind: 'built_in' as const,
    active: true,
    organization_id: null,
    trained_on: f.data.description,
    rows: f.data.rows,
    channels: f.channels.map((c) => c.name),
    weights: f.stack.weights,
  };
}

export function customSummary(m: CustomModel): CustomModelSummary {
  return {
    id: m.id,
    name: m.name,
    kind: 'custom' as const,
    active: m.active,
    challenger: m.challenger,
    organization_id: m.organization_id,
    base_model_id: m.base_model_id,
    boosters: m.settings.boosters ? 'own' : 'built_in',
    weights: m.settings.stack.weights,
    created_at: m.created_at.toISOString(),
    activated_at: m.activated_at?.toISOString() ?? null,
  };
}

export function builtInDetail(m: ModelBundle): ModelDetail {
  const f = m.file;
  return {
    ...builtInSummary(m),
    stack: { bias: f.stack.bias, weights: f.stack.weights, formula: 'log_odds = bias + Σ weight[c] · raw_score[c]' },
    calibration: f.calibration,
    cold_start: f.cold_start,
    thresholds: f.thresholds,
    bands: bandsOf(f.bands),
    features: Object.fromEntries(f.channels.map((c) => [c.name, c.features])),
    training: f.training,
    data_fingerprint: f.data.fingerprint,
    code_fingerprint: f.code_fingerprint,
  };
}

/** A custom model with its settings, over `base` (the loaded built-in model, for what it keeps). */
export function customDetail(model: CustomModel, base: ModelBundle): ModelDetail {
  const f = base.file;
  return {
    ...customSummary(model),
    stack: model.settings.stack,
    thresholds: model.settings.thresholds,
    bands: bandsOf(model.settings.bands),
    calibration: model.settings.calibration ?? f.calibration,
    cold_start: f.cold_start,
    boosters_sha256: model.settings.boosters?.sha256 ?? null,
  };
}
