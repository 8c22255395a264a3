// Models: the built-in model (public) and custom models of the caller's organizations (signed in;
// made from the command line, `npm run model:create`, docs/operating.md). Listing and reading a
// custom model is for members of its organization (404 for anyone else); activating and
// deactivating it is for owners (403 for analysts). An organization's active model is the one its
// API keys score with; with none active they score with the built-in model. Those decisions are the
// use cases' (app/custom-models.ts) and the answers' shapes app/model-views.ts's; this file
// translates HTTP to them.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { App } from '../../app/app.ts';
import { builtInDetail, builtInSummary, customDetail, customSummary } from '../../app/model-views.ts';
import { BACKTEST_ROWS } from '../../app/decisions/challenger-report.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { ChallengerReport, ModelAudit, ModelObject, RollBack, type ModelList } from '../../contract/models.ts';
import { requireUser } from '../caller.ts';
import { ModelIdParams } from '../schemas.ts';
import { OrgParams } from '../records.ts';

export function modelRoutes(server: FastifyInstance, app: Pick<App, 'sessions' | 'models' | 'customModels' | 'challengers'>): void {
  const r = server.withTypeProvider<ZodTypeProvider>();
  const errors = { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse };

  r.get(
    '/api/models',
    {
      schema: {
        tags: ['models'],
        summary: 'Models available to the caller',
        description: 'The built-in model, and when signed in the custom models of my organizations.',
        response: { 200: ModelObject, ...errors },
      },
    },
    async (request) => {
      const m = app.models.bundle();
      const custom = await app.customModels.visibleTo(request.signedIn?.user.id);
      return { models: [builtInSummary(m), ...custom.map(customSummary)] } satisfies ModelList;
    },
  );

  r.get(
    '/api/models/:id',
    { schema: { tags: ['models'], summary: 'One model with weights and thresholds', params: ModelIdParams, response: { 200: ModelObject, ...errors } } },
    async (request) => {
      const m = app.models.bundle();
      if (request.params.id === m.file.id) return builtInDetail(m);
      return customDetail(await app.customModels.read(request.params.id, request.signedIn?.user.id), m);
    },
  );

  for (const action of ['activate', 'deactivate'] as const) {
    r.post(
      `/api/models/:id/${action}`,
      {
        schema: {
          tags: ['models'],
          summary: action === 'activate' ? "Start using a custom model for the organization's API keys" : 'Stop using it (the built-in model scores again)',
          params: ModelIdParams,
          response: { 200: ModelObject, 400: ErrorResponse, ...errors },
        },
      },
      async (request) => {
        const { user } = requireUser(request, app.sessions);
        return customSummary(await app.customModels.setActive(request.params.id, user.id, action === 'activate'));
      },
    );
  }

  for (const method of ['POST', 'DELETE'] as const) {
    r.route({
      method,
      url: '/api/models/:id/challenger',
      schema: {
        tags: ['models'],
        summary: method === 'POST' ? 'Make a custom model a challenger: it scores every API-key request in shadow' : 'Stop a custom model being a challenger',
        description:
          "Owners only. A challenger's score and decision are recorded with each transaction (the record's `challengers`), never answered; at most three per organization (400 `limit_reached`), never the active model (409 `conflict`). Audited.",
        params: ModelIdParams,
        response: { 200: ModelObject, 400: ErrorResponse, 409: ErrorResponse, ...errors },
      },
      handler: async (request) => {
        const { user } = requireUser(request, app.sessions);
        return customSummary(await app.customModels.setChallenger(request.params.id, user.id, method === 'POST'));
      },
    });
  }

  r.post(
    '/api/organizations/:id/models/rollback',
    {
      schema: {
        tags: ['models'],
        summary: "Undo the organization's last promotion: the model active before it scores again",
        description: 'Owners only; audited. 409 `conflict` when there is no promotion to undo.',
        params: OrgParams,
        response: { 200: RollBack, 409: ErrorResponse, ...errors },
      },
    },
    async (request) => app.customModels.rollBack(request.params.id, requireUser(request, app.sessions).user.id),
  );

  r.get(
    '/api/organizations/:id/challengers/report',
    {
      schema: {
        tags: ['models'],
        summary: "How each challenger compares with the model that answered, on the organization's own outcomes",
        description:
          'Members. Per challenger, overall and per ISO week over the last 12 weeks: the transactions it scored in shadow that are older than the label delay (a fraud younger than that may not be reported yet; one never reported counts as legitimate). Average precision, ROC AUC, card precision@100 a day, calibration error, decisions that would change, and the fraud and legitimate amounts each would block, every figure with its 95 % paired bootstrap interval and that of the difference; `verdict` is `better` only when a figure is better beyond its interval and none worse (`worse` the other way round), else `no_difference`. Beside it, `backtest`: for each challenger of now, a backtest over the imported history (not live traffic), the most recent imported transactions older than the label delay (at most ' +
          BACKTEST_ROWS.toLocaleString('en') +
          ') scored now by the challenger and by the active model from the features the import stored for each, compared the same way; it can flatter a model (features computed after the fact, outcomes known now, and a model trained on that history has seen them), so the shadow comparison is the measure before a promotion.',
        params: OrgParams,
        response: { 200: ChallengerReport, ...errors },
      },
    },
    async (request) => app.challengers.report(request.params.id, requireUser(request, app.sessions).user.id),
  );

  r.get(
    '/api/organizations/:id/models/audit',
    {
      schema: {
        tags: ['models'],
        summary: "The organization's promotions, rollbacks and challenger changes, newest first (who and when)",
        params: OrgParams,
        response: { 200: ModelAudit, ...errors },
      },
    },
    async (request) => app.customModels.audit(request.params.id, requireUser(request, app.sessions).user.id),
  );
}
