// Checking a training request: training through the API is not built, but the request is checked
// for real, in the order a user would fix things, and what would have run is answered. From a
// dataset: a member of the organization named (`not_found` otherwise), and one of its owners
// (`forbidden`); the dataset visible to the caller and not expired (`not_found` / `gone`); it
// validates; at most MAX_TRAINING_ROWS rows (`too_many_rows`); a label column with both classes
// (`validation_failed`, counted by reading the file); the organization's daily job quota
// (job-quota.ts). From an organization's own data (no dataset): the same membership and quota, and
// the checks `npm run train -- --organization` makes (organization-training.ts), with that command.

import type { Config } from '../../config.ts';
import type { Db } from '../../storage/db.ts';
import { readRows, type ColumnMapping } from '../../datasets/csv.ts';
import { isProblem, type ModelBundle, type ModelProblem } from '../../model/bundle-types.ts';
import { countOrganizationJobsSince } from '../../storage/job-queue.ts';
import { liveDataset, type DatasetStore } from './datasets.ts';
import { AppError, available } from '../errors.ts';
import { planOrganizationModel } from '../organization-training.ts';
import type { OrganizationTrainingPlan } from '../../contract/training.ts';
import { quotaExceeded, utcDayStart } from './job-quota.ts';
import { memberOrganization } from '../access/ownership.ts';
import { requireCapability } from '../access/roles.ts';

export interface TrainingDeps extends DatasetStore {
  /** The whole database: an organization's training data is read through its scope. */
  db: Db;
  config: Pick<Config, 'UPLOAD_RETENTION_HOURS' | 'MAX_TRAINING_ROWS' | 'MAX_JOBS_PER_ORG_PER_DAY'>;
  /** The loaded model, whose features a new one would be made like. */
  model: ModelBundle | ModelProblem;
  /** Now, as the organization's data is read (outcomes known by then). */
  clock: () => number;
}

export interface TrainingRequest {
  dataset_id?: string | undefined;
  organization_id?: string | undefined;
  name?: string | undefined;
  recalibrate?: boolean | undefined;
}

/** The training a request for a dataset would run, once every check has passed. */
export interface DatasetTrainingPlan {
  source: 'dataset';
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

export type TrainingPlan = DatasetTrainingPlan | OrganizationTrainingPlan;

const refused = (path: string, message: string, fix: string) => new AppError('validation_failed', message, fix, { fields: [{ path, message }] });

/** Runs every check a training job of user `userId` would need; the plan when all pass. */
export async function planTraining(deps: TrainingDeps, userId: string, request: TrainingRequest): Promise<TrainingPlan> {
  if (request.dataset_id === undefined && request.organization_id === undefined)
    throw refused(
      'body.dataset_id',
      'name a dataset to train from, or an organization to train from its own data',
      'Send dataset_id (an uploaded CSV with labels), or organization_id alone to train from its scored and imported transactions.',
    );
  if (request.dataset_id !== undefined && request.recalibrate !== undefined)
    throw refused(
      'body.recalibrate',
      "recalibrate applies to training from an organization's own data, not from a dataset",
      'Leave out dataset_id or recalibrate.',
    );
  const org = request.organization_id ? await memberOrganization(deps.db, request.organization_id, userId) : undefined;
  // A model trained for an organization is one of its models: its owners'.
  if (org) requireCapability(org.role, 'manageModels', org.name);
  if (request.dataset_id === undefined) {
    const plan = await planOrganizationModel(deps.db, available(deps.model), {
      organization: org!.id,
      asOf: deps.clock(),
      recalibrate: request.recalibrate === true,
    });
    await withinQuota(deps, org!);
    return { ...plan, name: request.name ?? null };
  }
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
  if (org) await withinQuota(deps, org);
  return {
    source: 'dataset',
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

/** The organization's daily job quota, or `quota_exceeded`. */
async function withinQuota(deps: TrainingDeps, org: { id: string; name: string }): Promise<void> {
  const quota = deps.config.MAX_JOBS_PER_ORG_PER_DAY;
  if ((await countOrganizationJobsSince(deps.db, org.id, utcDayStart())) >= quota) throw quotaExceeded(org.name, quota);
}
