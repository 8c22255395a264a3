// Jobs: the durable work a member or a user queues (scoring a dataset, importing history,
// backtesting a rule; the service's own ring analysis is a job too, never listed), as the job routes
// answer them: one job, a list of them, and a finished scoring job's rows a page at a time.
// A job's `summary` and a result page are documented only as objects; what each holds is the
// work's own report, typed here (jobs/ writes them to these types), or by the domain's and the
// addon's types: a type loads nothing, so this module stays free of the code that writes them.

import { z } from 'zod';
import { MODE_NAMES, type ModeName } from '../model/bundle-types.ts';
import type { Tally } from '../domain/rules/backtest.ts';
import type { Decision } from '../domain/rules/decide.ts';
import type { RuleAction } from '../domain/rules/expression.ts';
import type { DriftReport } from '../model/drift.ts';
import type { ResultRow } from '../addon/addon.ts';

export const Job = z.object({
  id: z.string(),
  kind: z
    .enum(['score', 'history_import', 'rings', 'backtest'])
    .describe(
      "`score`: a dataset scored (POST /api/datasets/score); `history_import`: rows stored into an organization's history; `rings`: the service's own analysis of a weekly window, which belongs to no user and is never listed; `backtest`: a rule evaluated on the organization's logged decisions (its report is the `summary`)",
    ),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  stage: z.string(),
  progress: z.number(),
  elapsed_seconds: z.number(),
  error: z.string().optional(),
  dataset_id: z.string().nullable().describe('The dataset scored or imported; null for an import of the built-in example'),
  source: z.enum(['dataset', 'example']).optional().describe('What a history import stores'),
  organization_id: z.string().nullable(),
  mode: z.enum(MODE_NAMES).nullable().describe('Scoring jobs only'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  summary: z.record(z.string(), z.unknown()).nullable(),
});
export type Job = z.infer<typeof Job>;
export const JobList = z.object({ jobs: z.array(Job) });
export type JobList = z.infer<typeof JobList>;

/** A backtest job's report, its `summary` once it has succeeded (jobs/backtest-job.ts writes it):
 *  the version tested and the period, the rows scanned, that version's figures and warnings, its
 *  first matches of each outcome, and the live version's figures when another one was tested. */
export type BacktestReport = { rule: TestedVersion; from: string; to: string; scanned: number; reported_fraud: number } & VersionFigures & {
    examples: Tally['examples'];
    compare: ({ rule: TestedVersion } & VersionFigures) | null;
  };
/** The rule version a backtest tested (jobs/backtest-job.ts adds what it ran with). */
export interface TestedVersion {
  rule_id: string | null;
  version: number | null;
  expression: string;
  action: RuleAction;
}
type VersionFigures = ReturnType<Tally['report']>;

export interface BatchSummary {
  rows: number;
  decisions: Record<Decision, number>;
  bands: Record<'low' | 'medium' | 'high' | 'critical', number>;
  cold_start_rows: number;
  /** Milliseconds per stage. */
  stage_ms: Record<string, number>;
  /** How far the file is from what the model was validated on (model/drift.ts); null without a
   *  reference or with too few rows. */
  drift: DriftReport | null;
  metrics: null | {
    rows: number;
    fraud_rate: number;
    roc_auc: number;
    average_precision: number;
    brier: number;
    expected_calibration_error: number;
    precision: number;
    recall: number;
  };
}

/** The job's result. Times are ISO 8601 (null when nothing was stored). */
export interface HistoryImportSummary {
  /** Rows this job stored. */
  imported: number;
  /** Rows left out because the organization already had their transaction id (also a repeat of an
   *  id within the source). */
  skipped_existing: number;
  /** Of the stored rows: with a label, and with label 1. */
  labelled: number;
  fraud: number;
  first_time: string | null;
  last_time: string | null;
  /** Of the stored rows: with their features as of their own time (all of them once the job
   *  succeeded; absent when no model is loaded, and no features are computed). */
  featured?: number;
}

/** A job's `summary` (its schema: any object) by the job's `kind`, once it has succeeded: what the
 *  job's work reports. */
export type JobSummaries = {
  score: BatchSummary;
  history_import: HistoryImportSummary;
  backtest: BacktestReport;
};

/** What `GET /api/jobs/{id}/result` documents: an object. */
export const JobResultObject = z.record(z.string(), z.unknown());
/** What it answers: a page of a finished scoring job's rows, with the job's summary and metrics. */
export type JobResultPage = {
  job_id: string;
  mode: ModeName | null;
  rows: ResultRow[];
  page: number;
  page_size: number;
  total_rows: number;
  total_pages: number;
  summary: { metrics?: unknown } | null;
  metrics: unknown;
};
