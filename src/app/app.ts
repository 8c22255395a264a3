// The application's one door: what the HTTP layer may do, as typed capabilities (scoring, the
// sandbox, decisions, lists, rules, datasets, jobs, organizations, keys, sessions, …), each its use
// cases bound to the dependencies they need. `openApp` builds them from the running service (the
// composition root, service.ts, which only starts and stops things); the HTTP layer receives the
// App and never the service, a database, or live state (test/architecture.test.ts keeps it so).

import type { Config } from '../config.ts';
import { isProblem, type MetricsFile, type ModelBundle } from '../model/bundle-types.ts';
import type { KnownValues, ScoreInput, ScoreResponse } from '../contract/score.ts';
import type { Service } from './service.ts';
import { bind } from './capability.ts';
import { available, AppError } from './errors.ts';
import { healthReport } from './health.ts';
import { OrganizationCaller } from './access/organization-caller.ts';
import * as ownership from './access/ownership.ts';
import { ringsToList } from './decisions/rings.ts';
import { changeInbox, deleteInbox, inboxAudit, inboxStats } from './cases/inboxes.ts';
import { escalateCase } from './cases/escalation.ts';
import { attachFile, downloadAttachment } from './cases/attachments.ts';
import { allInboxes, assignCase, caseDetail, caseList, claimCase, createInbox, exportCase, nextCaseFor, noteCase, setCaseStatus } from './cases/cases.ts';
import { openCaseOnTransaction } from './cases/server-cases.ts';
import { decisionList, decisionRecord, entitySummary, keyValueSummary, reportOutcome, reportOutcomesInBulk } from './decisions/decisions.ts';
import { weeklyPerformance } from './decisions/performance.ts';
import { challengerReport } from './decisions/challenger-report.ts';
import { addListItems, allLists, createList, deleteList, listAudit, listPage, removeListItems } from './policy/lists.ts';
import { refuseForbidden, SANDBOX_FIELDS_NOTE, sentFields } from './sent-fields.ts';
import { allFields, declareField, fieldAudit, retireField } from './policy/fields.ts';
import { allRules, changeRule, checkRule, createRule, deleteRule, rule, ruleHistory, ruleVersions } from './policy/rules.ts';
import { queueBacktest } from './policy/backtests.ts';
import { deleteDataset, previewDataset, readDataset, revalidateDataset, storeUpload, uploadDataset } from './datasets/datasets.ts';
import { jobDownload, jobPage, jobsOf, queueScoringJob, readJob, scorableDataset } from './datasets/scoring-jobs.ts';
import { queueHistoryImport } from './datasets/history-imports.ts';
import {
  apiKeysOfOrganization,
  createApiKey,
  createOrganization,
  datasetsOfMyOrganization,
  myOrganizations,
  organizationWithMembers,
  revokeApiKey,
  rotateApiKey,
  usageOfOrganization,
} from './access/organizations.ts';
import { dataProtectionAudit, erasures, exportCustomer, requestErasure, retention, setRetention } from './data-protection/requests.ts';
import { changeMemberRole, inviteMember, memberAudit, memberList, removeMember, withdrawInvitation } from './access/members.ts';
import { customModelsVisibleTo, modelAuditFor, readCustomModel, rollBackFor, setChallengerFor, setCustomModelActiveFor } from './custom-models.ts';
import { planTraining } from './datasets/training-jobs.ts';
import {
  changeWebhookEndpoint,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  redeliverWebhook,
  rotateWebhookSecret,
  sendTestEvent,
  webhookDeliveries,
  webhookDelivery,
  webhookEndpoint,
  webhookEndpoints,
} from './webhooks/endpoints.ts';
import type { Accounts } from './access/accounts.ts';
import type { LiveApiKey } from '../storage/accounts-store.ts';

/** The signed-in checks the HTTP layer makes on every request with a cookie or a key. */
export interface Sessions {
  /** Whether sign-in is configured (an identity provider and a hashing secret). */
  readonly configured: boolean;
  /** The accounts of a server with sign-in (sessions, and the keys members manage), or 503
   *  `auth_not_configured`. */
  signedIn(): Accounts;
  /** What resolves a session cookie, when sign-in is configured. */
  resolver(): Pick<Accounts, 'resolve' | 'csrfMatches'> | undefined;
}

export interface Keys {
  /** The live key a bearer secret belongs to; 503 `auth_not_configured` where keys cannot be
   *  checked (PostgreSQL without SESSION_SECRET). */
  authenticate(secret: string): Promise<LiveApiKey | undefined>;
}

/** The loaded model and its evaluation, or 503 with the reason either is unavailable. */
export interface Models {
  bundle(): ModelBundle;
  metrics(): MetricsFile;
  /** The evaluation when there is one (the thresholds route reports without it). */
  metricsIfAny(): MetricsFile | undefined;
}

export function openApp(service: Service) {
  const { config, db, tail, decisionLog, sandbox, datasets: files, jobs, accounts, model, metrics, scorer } = service;
  const models: Models = {
    bundle: () => available(model),
    metrics: () => available(metrics),
    metricsIfAny: () => (isProblem(metrics) ? undefined : metrics),
  };
  const requireScorer = () => {
    models.bundle();
    if (!scorer) throw new AppError('model_unavailable', 'No model is loaded.', 'Restart the server with a complete model folder.');
    return scorer;
  };
  const notConfigured = (message: string, fix: string) => new AppError('auth_not_configured', message, fix);
  const sessions: Sessions = {
    configured: config.authConfigured,
    signedIn: () => {
      if (!accounts || !config.authConfigured) {
        throw notConfigured(
          'Sign-in is not configured on this server.',
          'Set AUTHPROVIDER_URL (and, on PostgreSQL, SESSION_SECRET; see the README, Configuration), restart, and check that GET /api/health reports auth_configured true. For development, npm run dev:idp is a local identity provider.',
        );
      }
      return accounts;
    },
    resolver: () => (accounts && config.authConfigured ? accounts : undefined),
  };
  const keys: Keys = {
    authenticate: (secret) => {
      if (!accounts)
        throw notConfigured(
          'API keys cannot be checked: this server has no SESSION_SECRET.',
          'Set SESSION_SECRET (the same value in every server process sharing the database; README, Configuration) and restart.',
        );
      return accounts.authenticateKey(secret);
    },
  };
  const sandboxNote = [
    `What-if: scored against the public sandbox (the built-in example history as of ${sandbox.example.sandbox_as_of}); nothing was recorded. Score with an API key (POST /api/v1/risk/score) to use and record your organization's own history.`,
  ];
  const live = {
    db,
    decisionLog,
    tail,
    model,
    scorer,
    scorerForModel: service.scorerForModel,
    featureNames: service.featureNames,
    config,
    clock: service.clock,
  };
  const store = { db, datasets: files, config, jobs };

  return {
    config: config as Config,
    models,
    sessions,
    keys,
    health: {
      report: () =>
        healthReport({
          db,
          model,
          metrics,
          tail,
          tenants: service.tenants,
          authConfigured: config.authConfigured,
          sandboxSize: () => sandbox.size,
          jobsRunning: () => jobs?.runningByKind ?? {},
          startedAt: service.startedAt,
          startup: service.startup,
        }),
    },
    sandbox: {
      /** A what-if score against the public sandbox: nothing recorded. */
      score: async (input: ScoreInput): Promise<ScoreResponse> => {
        const fields = sentFields(input.fields);
        refuseForbidden(fields);
        const notes = fields ? [...sandboxNote, SANDBOX_FIELDS_NOTE] : sandboxNote;
        const scorer = requireScorer();
        const { history, ringIndex } = await sandbox.built();
        return scorer.score(input, { history, rings: ringIndex, at: sandbox.asOf, notes });
      },
      example: () => sandbox.example,
      /** What a score's notes go by: the scorer's own sets (the sandbox's places without a reference). */
      knownValues: (): KnownValues => {
        const m = models.bundle();
        const known = requireScorer().known;
        return {
          model_id: m.file.id,
          payment_types: [...known.paymentTypes],
          locations: known.locations ? [...known.locations].sort() : [...sandbox.locations],
          sandbox_as_of: sandbox.example.sandbox_as_of,
        };
      },
    },
    scoring: { scoreAndRecord: service.scoreAndRecord.score.bind(service.scoreAndRecord) },
    rings: { list: (caller: OrganizationCaller | undefined) => ringsToList({ db, sandbox }, caller) },
    decisions: bind(live, { list: decisionList, record: decisionRecord, entity: entitySummary, keyValue: keyValueSummary, weekly: weeklyPerformance }),
    outcomes: bind(live, { report: reportOutcome, reportInBulk: reportOutcomesInBulk }),
    lists: bind(live, {
      all: allLists,
      create: createList,
      page: listPage,
      audit: listAudit,
      remove: deleteList,
      addItems: addListItems,
      removeItems: removeListItems,
    }),
    fields: bind(live, { all: allFields, declare: declareField, retire: retireField, audit: fieldAudit }),
    cases: bind(live, {
      inboxes: allInboxes,
      createInbox,
      list: caseList,
      detail: caseDetail,
      export: exportCase,
      status: setCaseStatus,
      assign: assignCase,
      claim: claimCase,
      note: noteCase,
      next: nextCaseFor,
      changeInbox,
      deleteInbox,
      inboxStats,
      inboxAudit,
      escalate: escalateCase,
      attach: attachFile,
      attachment: downloadAttachment,
      open: openCaseOnTransaction,
    }),
    /** Cases a customer's server opens on its transactions (the key surface). */
    serverCases: bind(live, { open: openCaseOnTransaction }),
    rules: bind(live, {
      all: allRules,
      one: rule,
      create: createRule,
      change: changeRule,
      remove: deleteRule,
      versions: ruleVersions,
      history: ruleHistory,
      check: checkRule,
    }),
    backtests: bind({ ...live, jobs }, { queue: queueBacktest }),
    datasets: bind(store, {
      one: readDataset,
      preview: previewDataset,
      revalidate: revalidateDataset,
      remove: deleteDataset,
      store: storeUpload,
      record: uploadDataset,
    }),
    scoringJobs: bind(store, { scorable: scorableDataset, queue: queueScoringJob, one: readJob, of: jobsOf, page: jobPage, download: jobDownload }),
    historyImports: bind(store, { queue: queueHistoryImport }),
    training: bind({ ...store, model, clock: service.clock }, { plan: planTraining }),
    organizations: {
      ...bind(db, {
        mine: myOrganizations,
        create: createOrganization,
        withMembers: organizationWithMembers,
        keys: apiKeysOfOrganization,
        datasets: datasetsOfMyOrganization,
        member: ownership.memberOrganization,
      }),
      /** Whom a member's request about an organization acts for, or 404 (never 403). */
      caller: async (orgId: string, userId: string) => OrganizationCaller.member(await ownership.memberOrganization(db, orgId, userId), userId),
      createKey: (orgId: string, userId: string, name: string) => createApiKey(db, sessions.signedIn(), orgId, userId, name),
      rotateKey: (keyId: string, userId: string) => rotateApiKey(db, sessions.signedIn(), keyId, userId),
      revokeKey: (keyId: string, userId: string) => revokeApiKey(db, sessions.signedIn(), keyId, userId),
      usage: (orgId: string, userId: string) => usageOfOrganization(db, sessions.signedIn(), orgId, userId),
    },
    members: bind(
      { db },
      { all: memberList, invite: inviteMember, withdraw: withdrawInvitation, changeRole: changeMemberRole, remove: removeMember, audit: memberAudit },
    ),
    webhooks: bind(
      {
        db,
        box: service.secretBox,
        policy: { allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS },
        endpointsChanged: (id: string) => service.subscriptions.refresh(id),
      },
      {
        all: webhookEndpoints,
        one: webhookEndpoint,
        create: createWebhookEndpoint,
        change: changeWebhookEndpoint,
        rotate: rotateWebhookSecret,
        remove: deleteWebhookEndpoint,
        deliveries: webhookDeliveries,
        delivery: webhookDelivery,
        test: sendTestEvent,
        redeliver: redeliverWebhook,
      },
    ),
    challengers: bind(
      {
        db,
        labelDelay: service.labelDelay,
        clock: service.clock,
        scorer: service.scorer,
        scorerForModel: service.scorerForModel,
        compare: service.compare,
      },
      { report: challengerReport },
    ),
    dataProtection: bind(
      { ...live, config, clock: service.clock, secret: service.secret, erasureRequested: () => service.dataProtection.erasureRequested() },
      { retention, setRetention, exportCustomer, requestErasure, erasures, audit: dataProtectionAudit },
    ),
    customModels: {
      ...bind(db, { visibleTo: customModelsVisibleTo, read: readCustomModel }),
      setActive: (id: string, userId: string, active: boolean) => setCustomModelActiveFor({ db, accounts }, id, userId, models.bundle().file.id, active),
      setChallenger: (id: string, userId: string, on: boolean) => setChallengerFor({ db, accounts }, id, userId, on),
      rollBack: (organizationId: string, userId: string) => rollBackFor({ db, accounts }, organizationId, userId),
      audit: (organizationId: string, userId: string) => modelAuditFor(db, organizationId, userId),
    },
  };
}

/** Everything the HTTP layer may use. */
export type App = ReturnType<typeof openApp>;
/** The key surface's part (`/api/v1/...`). */
export type KeySurface = Pick<App, 'config' | 'models' | 'keys' | 'scoring' | 'decisions' | 'outcomes' | 'lists' | 'serverCases' | 'dataProtection'>;

/** The key a request on the key surface authenticated with, as the HTTP layer carries it. */
export type { LiveApiKey as AuthenticatedKey } from '../storage/accounts-store.ts';
