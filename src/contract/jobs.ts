// Jobs: the durable work a member or a user queues (scoring a dataset, importing history,
// backtesting a rule; the service's own ring analysis is a job too, never listed), as the job routes
// answer them: one job, a list of them, and a finished scoring job's rows a page at a time.
// A job's `summary` and a result page are documented only as objects; what each holds is the
// work's own report (jobs/, domain/rules/backtest.ts), named here by type alone: a type loads
// nothing, so this module stays free of the code that writes them.

import { z } from 'zod';
import { MODE_NAMES, type ModeName } from '../model/bundle-types.ts';
import type { Tally } from '../domain/rules/backtest.ts';
import type { BatchSummary } from '../jobs/batch-score.ts';
import type { HistoryImportSummary } from '../jobs/history-import.ts';
import type { BacktestVersion } from '../jobs/backtest-job.ts';
import type { ResultRow } from '../jobs/result-row.ts';

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
type TestedVersion = Pick<BacktestVersion, 'rule_id' | 'version' | 'expression' | 'action'>;
type VersionFigures = ReturnType<Tally['report']>;

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
