// What the service answers, as the service itself declares it: each type is the response type of a
// route the dashboard calls, taken from that route's zod schema (or, where the schema says only
// "an object", from what its handler returns). `npm run typecheck` checks the pages against them, so
// a change to a schema that a page does not follow fails to compile. Types only (`export type`):
// nothing of src/ reaches the browser bundle.

export type { PublicConfig } from '../../src/config.ts';
export type { Me, SessionResponse, User } from '../../src/http/routes/auth.ts';
export type { ApiKey, ApiKeyList, ApiKeyWithSecret, Member, Organization, OrganizationDatasets, OrganizationList, OrganizationWithMembers, Usage } from '../../src/http/routes/organizations.ts';
export type { Dataset, DatasetValidation, Preview } from '../../src/http/routes/datasets.ts';
export type { Job, JobList, JobResultPage, JobSummaries } from '../../src/http/routes/jobs.ts';
export type { Health, KnownValues, MetricsCharts, MetricsLimitations, MetricsOverview, MetricsRings, Thresholds } from '../../src/http/routes/public.ts';
export type { CustomModelSummary, ModelDetail, ModelList, ModelSummary } from '../../src/http/routes/models.ts';
export type { AddResult, CheckResult, List, ListIndex, ListItem, ListPage, RemoveResult, Rule, RuleList, RuleVersion, RuleVersions } from '../../src/http/routes/rules.ts';
export type { Entity, Performance, TransactionPage, TransactionRecord, Week } from '../../src/http/routes/transactions.ts';
export type { Reason, RuleMatch, ScoreResponse } from '../../src/http/schemas.ts';

import type { Week } from '../../src/http/routes/transactions.ts';

/** A drift report (a week's of the performance, a scoring job's summary's). */
export type DriftReport = NonNullable<Week['drift']>;
