// The `operationId` of every operation of the OpenAPI reference (/api/docs/json), in one table, so
// that a client generated from the reference (openapi-typescript, openapi-generator, …) has stable,
// readable method names that do not change when a summary or a route file does. app.ts's swagger
// transform applies them; a route may instead declare `schema.operationId` itself, which wins.
// The naming rule: a verb and what it acts on, camelCase (`getJob`, `listRules`, `createApiKey`);
// an operation of the API-key surface (`/api/v1/...`) that has a twin on the dashboard surface
// has `Key` after its verb (`getKeyTransaction` beside `getTransaction`). Once published, an id is
// never renamed: clients' code is written against it.
// A route in neither place still gets an id, derived from its method and path (derivedOperationId),
// so the reference stays valid; a test (test/http/operation-ids.test.ts) fails naming every such
// route, so a new route is given a real name before it ships.

/** `METHOD /path/{param}` (the reference's path form) → operationId. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  // Public reads
  'GET /api/health': 'getHealth',
  'GET /api/config': 'getConfig',
  'GET /api/risk/thresholds': 'getThresholds',
  'GET /api/risk/known-values': 'getKnownValues',
  'GET /api/metrics/overview': 'getMetricsOverview',
  'GET /api/metrics/charts': 'getMetricsCharts',
  'GET /api/metrics/limitations': 'getMetricsLimitations',
  'GET /api/metrics/rings': 'getMetricsRings',
  'GET /api/datasets/format': 'getDatasetFormat',
  'GET /api/datasets/example': 'getExampleDataset',
  'GET /api/training/limits': 'getTrainingLimits',
  // Scoring
  'POST /api/risk/score': 'scoreTransaction',
  'POST /api/v1/risk/score': 'scoreAndRecordTransaction',
  // Datasets and jobs
  'POST /api/datasets/upload': 'uploadDataset',
  'GET /api/datasets/{id}': 'getDataset',
  'DELETE /api/datasets/{id}': 'deleteDataset',
  'GET /api/datasets/{id}/preview': 'previewDataset',
  'POST /api/datasets/{id}/validate': 'validateDataset',
  'POST /api/datasets/score': 'scoreDataset',
  'GET /api/jobs': 'listJobs',
  'GET /api/jobs/{id}': 'getJob',
  'GET /api/jobs/{id}/result': 'getJobResult',
  'GET /api/jobs/{id}/download': 'downloadJobResult',
  // Sign-in, organizations and API keys
  'POST /api/auth/session': 'createSession',
  'POST /api/auth/logout': 'endSession',
  'GET /api/auth/me': 'getMe',
  'GET /api/organizations': 'listOrganizations',
  'POST /api/organizations': 'createOrganization',
  'GET /api/organizations/{id}': 'getOrganization',
  'GET /api/organizations/{id}/api-keys': 'listApiKeys',
  'POST /api/organizations/{id}/api-keys': 'createApiKey',
  'POST /api/api-keys/{id}/rotate': 'rotateApiKey',
  'POST /api/api-keys/{id}/revoke': 'revokeApiKey',
  'GET /api/organizations/{id}/members': 'listMembers',
  'POST /api/organizations/{id}/members': 'inviteMember',
  'GET /api/organizations/{id}/members/audit': 'listMemberChanges',
  'PATCH /api/organizations/{id}/members/{user_id}': 'updateMember',
  'DELETE /api/organizations/{id}/members/{user_id}': 'removeMember',
  'DELETE /api/organizations/{id}/invitations/{email}': 'withdrawInvitation',
  'GET /api/organizations/{id}/datasets': 'listOrganizationDatasets',
  'GET /api/organizations/{id}/usage': 'getOrganizationUsage',
  'GET /api/organizations/{id}/performance': 'getOrganizationPerformance',
  // The decision log
  'GET /api/organizations/{id}/transactions': 'listTransactions',
  'GET /api/organizations/{id}/transactions/{transaction_id}': 'getTransaction',
  'POST /api/organizations/{id}/transactions/{transaction_id}/outcome': 'reportTransactionOutcome',
  'GET /api/organizations/{id}/entities/{role}/{entity_id}': 'getEntity',
  'GET /api/v1/transactions': 'listKeyTransactions',
  'GET /api/v1/transactions/{transaction_id}': 'getKeyTransaction',
  'POST /api/v1/transactions/{transaction_id}/outcome': 'reportKeyTransactionOutcome',
  'POST /api/v1/outcomes': 'reportKeyOutcomes',
  'POST /api/v1/cases': 'openKeyCase',
  // Webhooks
  'GET /api/organizations/{id}/webhooks': 'listWebhookEndpoints',
  'POST /api/organizations/{id}/webhooks': 'createWebhookEndpoint',
  'GET /api/organizations/{id}/webhooks/{webhook_id}': 'getWebhookEndpoint',
  'PATCH /api/organizations/{id}/webhooks/{webhook_id}': 'updateWebhookEndpoint',
  'DELETE /api/organizations/{id}/webhooks/{webhook_id}': 'deleteWebhookEndpoint',
  'POST /api/organizations/{id}/webhooks/{webhook_id}/rotate': 'rotateWebhookSecret',
  'GET /api/organizations/{id}/webhooks/{webhook_id}/deliveries': 'listWebhookDeliveries',
  'GET /api/organizations/{id}/webhooks/{webhook_id}/deliveries/{delivery_id}': 'getWebhookDelivery',
  'POST /api/organizations/{id}/webhooks/{webhook_id}/test': 'sendWebhookTestEvent',
  'POST /api/organizations/{id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': 'redeliverWebhook',
  // Lists and rules
  'GET /api/organizations/{id}/lists': 'listLists',
  'POST /api/organizations/{id}/lists': 'createList',
  'GET /api/organizations/{id}/lists/{name}': 'getList',
  'DELETE /api/organizations/{id}/lists/{name}': 'deleteList',
  'POST /api/organizations/{id}/lists/{name}/items': 'addListItems',
  'DELETE /api/organizations/{id}/lists/{name}/items': 'removeListItems',
  'GET /api/organizations/{id}/lists/{name}/audit': 'listListChanges',
  'GET /api/organizations/{id}/fields': 'listFields',
  'POST /api/organizations/{id}/fields': 'declareField',
  'DELETE /api/organizations/{id}/fields/{name}': 'retireField',
  'GET /api/organizations/{id}/fields/{name}/audit': 'listFieldChanges',
  'GET /api/organizations/{id}/fields/{name}/values/{value}': 'getKeyValue',
  'GET /api/organizations/{id}/inboxes': 'listInboxes',
  'POST /api/organizations/{id}/inboxes': 'createInbox',
  'PATCH /api/organizations/{id}/inboxes/{inbox_id}': 'changeInbox',
  'DELETE /api/organizations/{id}/inboxes/{inbox_id}': 'deleteInbox',
  'GET /api/organizations/{id}/inboxes/{inbox_id}/stats': 'getInboxStats',
  'GET /api/organizations/{id}/inboxes/{inbox_id}/audit': 'getInboxAudit',
  'POST /api/organizations/{id}/cases/{case_id}/escalate': 'escalateCase',
  'POST /api/organizations/{id}/cases/{case_id}/attachments': 'attachToCase',
  'GET /api/organizations/{id}/cases/{case_id}/attachments/{attachment_id}': 'downloadCaseAttachment',
  'GET /api/organizations/{id}/cases': 'listCases',
  'POST /api/organizations/{id}/cases': 'openCase',
  'GET /api/organizations/{id}/cases/{case_id}': 'getCase',
  'GET /api/organizations/{id}/cases/{case_id}/export': 'exportCase',
  'POST /api/organizations/{id}/cases/next': 'nextCase',
  'POST /api/organizations/{id}/cases/{case_id}/status': 'setCaseStatus',
  'POST /api/organizations/{id}/cases/{case_id}/assign': 'assignCase',
  'POST /api/organizations/{id}/cases/{case_id}/claim': 'claimCase',
  'POST /api/organizations/{id}/cases/{case_id}/notes': 'noteCase',
  'POST /api/v1/lists/{name}/items': 'addKeyListItems',
  'DELETE /api/v1/lists/{name}/items': 'removeKeyListItems',
  'GET /api/organizations/{id}/rules': 'listRules',
  'POST /api/organizations/{id}/rules': 'createRule',
  'POST /api/organizations/{id}/rules/check': 'checkRule',
  'POST /api/organizations/{id}/rules/backtests': 'backtestRule',
  'GET /api/organizations/{id}/rules/{rule_id}': 'getRule',
  'PUT /api/organizations/{id}/rules/{rule_id}': 'updateRule',
  'DELETE /api/organizations/{id}/rules/{rule_id}': 'deleteRule',
  'GET /api/organizations/{id}/rules/{rule_id}/versions': 'listRuleVersions',
  'GET /api/organizations/{id}/rules/{rule_id}/history': 'getRuleHistory',
  // History, training and models
  'POST /api/organizations/{id}/history-imports': 'importHistory',
  'POST /api/training/jobs': 'createTrainingJob',
  'GET /api/models': 'listModels',
  'GET /api/models/{id}': 'getModel',
  'POST /api/models/{id}/activate': 'activateModel',
  'POST /api/models/{id}/deactivate': 'deactivateModel',
  'POST /api/models/{id}/challenger': 'addChallenger',
  'DELETE /api/models/{id}/challenger': 'removeChallenger',
  'POST /api/organizations/{id}/models/rollback': 'rollBackModel',
  'GET /api/organizations/{id}/models/audit': 'listModelChanges',
  'GET /api/organizations/{id}/challengers/report': 'getChallengerReport',
  // Data protection
  'GET /api/organizations/{id}/retention': 'getRetention',
  'PUT /api/organizations/{id}/retention': 'setRetention',
  'GET /api/organizations/{id}/customers/{customer_id}/export': 'exportCustomer',
  'POST /api/organizations/{id}/customers/{customer_id}/erasure': 'eraseCustomer',
  'POST /api/v1/customers/{customer_id}/erasure': 'eraseKeyCustomer',
  'GET /api/organizations/{id}/erasures': 'listErasures',
  'GET /api/organizations/{id}/data-protection/audit': 'listDataProtectionAudit',
};

/** A route's path as the reference writes it: Fastify's `:param` as `{param}`. */
export function documentedPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

/** The id a route without a name gets: method and path words, camelCase
 *  (`GET /api/v1/transactions/{transaction_id}` → `getApiV1TransactionsByTransactionId`). Valid and
 *  unique, but it changes with the path: the test refuses it. */
export function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `by_${part.slice(1, -1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

/** The operationId of `method` on a route of Fastify path `url`: the table's, or a derived one. */
export function operationIdOf(method: string, url: string): string {
  const path = documentedPath(url);
  return OPERATION_IDS[`${method.toUpperCase()} ${path}`] ?? derivedOperationId(method, path);
}
