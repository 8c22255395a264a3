// What the service answers, as the service itself declares it: each type is the response type of a
// route the dashboard calls, from src/contract/ (the layer whose zod schemas the routes document
// and serialise with, and whose types the use cases return; where a route's schema says only "an
// object", the type there says what it holds). `npm run typecheck` checks the pages against them,
// so a change to a schema that a page does not follow fails to compile. Types only
// (`export type`): nothing of src/ reaches the browser bundle.

export type { PublicConfig } from '../../src/config.ts';
export type { Me, SessionResponse, User } from '../../src/contract/auth.ts';
export type {
  ApiKey,
  ApiKeyList,
  ApiKeyWithSecret,
  Invitation,
  Member,
  MemberAudit,
  MemberChange,
  MemberList,
  Organization,
  OrganizationDatasets,
  OrganizationList,
  OrganizationWithMembers,
  Role,
  Usage,
} from '../../src/contract/organizations.ts';
export type { Dataset, DatasetValidation, Preview } from '../../src/contract/datasets.ts';
export type { Job, JobList, JobResultPage, JobSummaries } from '../../src/contract/jobs.ts';
export type { Health } from '../../src/contract/health.ts';
export type { OrganizationTrainingPlan } from '../../src/contract/training.ts';
export type { Case, CaseDetail, CasePage, Inbox, InboxList } from '../../src/contract/cases.ts';
export type { InboxStats } from '../../src/contract/inboxes.ts';
export type { MetricsCharts, MetricsLimitations, MetricsOverview, MetricsRings, Thresholds } from '../../src/contract/evaluation.ts';
export type { ChallengerReport, CustomModelSummary, ModelAudit, ModelDetail, ModelList, ModelSummary, RollBack } from '../../src/contract/models.ts';
export type {
  AddResult,
  CheckResult,
  List,
  ListIndex,
  ListItem,
  ListPage,
  RemoveResult,
  Rule,
  RuleList,
  RuleVersion,
  RuleVersions,
} from '../../src/contract/rules.ts';
export type { Field, FieldAudit, FieldList } from '../../src/contract/custom-fields.ts';
export type { CustomerExport, DataProtectionAudit, Erasure, ErasureAccepted, ErasureList, Retention } from '../../src/contract/data-protection.ts';
export type { Entity, TransactionPage, TransactionRecord } from '../../src/contract/transactions.ts';
export type { Performance, Week } from '../../src/contract/performance.ts';
export type { DriftReport } from '../../src/contract/drift.ts';
export type { KnownValues, Reason, RuleMatch, ScoreResponse } from '../../src/contract/score.ts';
export type {
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookEventType,
} from '../../src/contract/webhooks.ts';
