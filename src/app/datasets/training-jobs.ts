// Checking a training request: training through the API is not built, but the request is checked
// for real, in the order a user would fix things, and what would have run is answered. Checks: a
// member of the organization named (`not_found` otherwise), and one of its owners (`forbidden`);
// the dataset visible to the caller and not expired (`not_found` / `gone`); it validates; at most
// MAX_TRAINING_ROWS rows
// (`too_many_rows`); a label column with both classes (`validation_failed`, counted by reading the
// file); the organization's daily job quota (job-quota.ts).

import type { Config } from '../../config.ts';
import { readRows, type ColumnMapping } from '../../datasets/csv.ts';
import { isProblem, type ModelBundle, type ModelProblem } from '../../model/bundle-types.ts';
import { countOrganizationJobsSince } from '../../storage/job-queue.ts';
import { liveDataset, type DatasetStore } from './datasets.ts';
import { AppError } from '../errors.ts';
import { quotaExceeded, utcDayStart } from './job-quota.ts';
import { memberOrganization } from '../access/ownership.ts';
import { requireCapability } from '../access/roles.ts';

export interface TrainingDeps extends DatasetStore {
  config: Pick<Config, 'UPLOAD_RETENTION_HOURS' | 'MAX_TRAINING_ROWS' | 'MAX_JOBS_PER_ORG_PER_DAY'>;
  /** The loaded model, whose features a new one would be made like. */
  model: ModelBundle | ModelProblem;
}

export interface TrainingRequest {
  dataset_id: string;
  organization_id?: string;
  name?: string;
}

/** The training a request would run, once every check has passed. */
export interface TrainingPlan {
  dataset_id: string;
  organization_id: string | null;
  name: string | null;
  rows: number;
  fraud_labels: number;
  legitimate_labels: number;
  features_like: string | null;
  steps: string[];
}

/** Fraud and legitimate labels of a dataset, counted by reading its file. */
async function countLabels(deps: DatasetStore, storedName: string, mapping: ColumnMapping): Promise<{ fraud: number; legit: number }> {
  let fraud = 0;
  let legit = 0;
  for await (const row of readRows(deps.datasets.path(storedName), mapping)) {
    if (row.label === 1) fraud++;
    else if (row.label === 0) legit++;
  }
  return { fraud, legit };
}

/** Runs every check a training job of user `userId` would need; the plan when all pass. */
export async function planTraining(deps: TrainingDeps, userId: string, request: TrainingRequest): Promise<TrainingPlan> {
  const org = request.organization_id ? await memberOrganization(deps.db, request.organization_id, userId) : undefined;
  // A model trained for an organization is one of its models: its owners'.
  if (org) requireCapability(org.role, 'manageModels', org.name);
  const d = await liveDataset(deps, request.dataset_id, userId);
  if (!d.validation.valid)
    throw new AppError(
      'validation_failed',
      `Dataset ${d.id} does not validate yet.`,
      `Fix it with POST /api/datasets/${d.id}/validate and a column mapping first.`,
      { validation: d.validation },
    );
  const max = deps.config.MAX_TRAINING_ROWS;
  if (d.rows > max)
    throw new AppError(
      'too_many_rows',
      `Dataset ${d.id} has ${d.rows} rows; training takes at most ${max}.`,
      `Upload at most ${max} rows (the most recent ones), or raise MAX_TRAINING_ROWS on the server.`,
    );
  if (!d.has_labels)
    throw new AppError(
      'validation_failed',
      `Dataset ${d.id} has no label column.`,
      'Add a label column (1 fraud, 0 legitimate) or map one with POST /api/datasets/{id}/validate.',
      { fields: [{ path: 'label', message: 'missing' }] },
    );
  const { fraud, legit } = await countLabels(deps, d.stored_name, d.mapping);
  if (fraud === 0 || legit === 0) {
    throw new AppError(
      'validation_failed',
      `Dataset ${d.id} has ${fraud} fraud and ${legit} legitimate labels; training needs both classes.`,
      'Include labelled examples of both classes (1 fraud, 0 legitimate).',
      { fields: [{ path: 'label', message: 'needs both 0 and 1' }] },
    );
  }
  if (org) {
    const quota = deps.config.MAX_JOBS_PER_ORG_PER_DAY;
    if ((await countOrganizationJobsSince(deps.db, org.id, utcDayStart())) >= quota) throw quotaExceeded(org.name, quota);
  }
  return {
    dataset_id: d.id,
    organization_id: org?.id ?? null,
    name: request.name ?? null,
    rows: d.rows,
    fraud_labels: fraud,
    legitimate_labels: legit,
    features_like: isProblem(deps.model) ? null : deps.model.file.id,
    steps: [
      'point-in-time features in four channels',
      'one interaction-constrained LightGBM booster split into four channel boosters',
      'stacking and Platt calibration on the validation split',
      'thresholds per mode',
      'evaluation on the test split',
    ],
  };
}
