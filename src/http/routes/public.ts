// The public read endpoints: health, config, thresholds, the payment types and locations the model
// knows (for the score form's suggestions), models, the published evaluation (overview, charts,
// limitations, rings), the dataset format and example, and training limits.
// Each answers from the service's state, in the shape src/contract/ declares; a missing model or
// evaluation is a 503 with its reason.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { PublicConfig, publicConfig } from '../../config.ts';
import { CHANNEL_FEATURES } from '../../domain/features/extract.ts';
import { MODE_NAMES } from '../../model/bundle-types.ts';
import type { App, AuthenticatedKey } from '../../app/app.ts';
import { OrganizationCaller } from '../../app/access/organization-caller.ts';
import { FEED_BEHIND_MS, POLL_MS } from '../../app/feed-health.ts';
import { DatasetFormat, ExampleDataset } from '../../contract/datasets.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { MetricsCharts, MetricsLimitations, MetricsOverview, MetricsRings, Thresholds } from '../../contract/evaluation.ts';
import { healthSchema } from '../../contract/health.ts';
import { KnownValues } from '../../contract/score.ts';
import { TrainingLimits } from '../../contract/training.ts';
import { keyAuthentication } from '../guards.ts';

// What these reads can fail with besides the statuses every route has: no model or no evaluation.
const errors = { 503: ErrorResponse };
const Health = healthSchema({ pollMs: POLL_MS, behindMs: FEED_BEHIND_MS });

export function publicRoutes(server: FastifyInstance, app: App): void {
  const r = server.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/api/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Whether the API, the model, the database and the live feed work',
        response: {
          200: Health,
        },
      },
    },
    async () => app.health.report(),
  );

  r.get(
    '/api/config',
    { schema: { tags: ['service'], summary: 'What a browser needs to start, with the enforced limits', response: { 200: PublicConfig } } },
    async () => publicConfig(app.config),
  );

  r.get(
    '/api/risk/thresholds',
    {
      schema: {
        tags: ['scoring'],
        summary: "The three modes' thresholds, what each costs, and whether each still meets its target on the test split",
        description:
          'Per mode, on the test split: `review_rate` and `block_rate`, the shares of transactions at or above the review and the block threshold (a transaction at or above block is blocked, so `review_rate` is the share flagged either way); precision, recall and `fraud_caught_per_1000` of blocking; `review_warning` when the review rate is over 10 % of traffic; and whether the target still holds.',
        response: { 200: Thresholds, ...errors },
      },
    },
    async () => {
      const m = app.models.bundle();
      const metrics = app.models.metricsIfAny();
      return {
        model_id: m.file.id,
        default_mode: 'balanced',
        split: 'test',
        modes: Object.fromEntries(
          MODE_NAMES.map((mode) => {
            const t = m.file.thresholds[mode];
            const check = metrics?.modes[mode];
            return [
              mode,
              {
                review_threshold: t.review,
                block_threshold: t.block,
                target: t.target,
                meets_target: check?.meets_target ?? null,
                measured: check?.measured ?? null,
                review_rate: check?.review_rate ?? null,
                block_rate: check?.block_rate ?? null,
                precision: check?.precision ?? null,
                recall: check?.recall ?? null,
                fraud_caught_per_1000: check?.fraud_caught_per_1000 ?? null,
                review_warning: check?.review_warning ?? null,
              },
            ];
          }),
        ),
        ...(metrics ? {} : { note: 'The evaluation is unavailable, so whether each target still holds is unknown (null).' }),
      };
    },
  );

  r.get(
    '/api/risk/known-values',
    {
      schema: {
        tags: ['scoring'],
        summary: 'The payment types and locations the model knows',
        description:
          "What the score form suggests, and what to map your values onto: a score whose payment_type or location is not listed says so in its `notes`. Payment types: the ones the tabular channel codes; any other is scored as missing. Locations: those of the model's training data (for the built-in model, the public sandbox's). The model keeps no list of places: a location counts through whether the customer used it before and through its channel (payment_type:location), so one not listed says nothing the model learned about the place itself. Any value is accepted when scoring.",
        response: {
          200: KnownValues,
          ...errors,
        },
      },
    },
    async () => app.sandbox.knownValues(),
  );

  r.get(
    '/api/metrics/overview',
    { schema: { tags: ['evaluation'], summary: 'Measured results, each labelled with its data split', response: { 200: MetricsOverview, ...errors } } },
    async () => {
      const m = app.models.metrics();
      const selection = m.selection
        ? { split: m.selection.split, settings_tried: m.selection.settings_tried, models_compared: m.selection.models_compared, chosen: m.selection.chosen }
        : null;
      return {
        model_id: m.model_id,
        splits: m.splits,
        channel_auc: m.channel_auc,
        modes: m.modes,
        comparisons: m.comparisons,
        seed_spread: m.seed_spread ?? null,
        selection,
      };
    },
  );

  r.get(
    '/api/metrics/charts',
    { schema: { tags: ['evaluation'], summary: 'The same numbers shaped for charts', response: { 200: MetricsCharts, ...errors } } },
    async () => {
      const m = app.models.metrics();
      return { model_id: m.model_id, ...m.charts };
    },
  );

  r.get(
    '/api/metrics/limitations',
    { schema: { tags: ['evaluation'], summary: 'What the metrics do not cover', response: { 200: MetricsLimitations, ...errors } } },
    async () => {
      const m = app.models.metrics();
      return { model_id: m.model_id, limitations: m.limitations };
    },
  );

  r.get(
    '/api/metrics/rings',
    {
      schema: {
        tags: ['evaluation'],
        summary: 'Abuse-ring detection results',
        description:
          "Without credentials: the evaluation's ring results and the groups flagged over the public sandbox. With an organization's API key (Authorization: Bearer <API key>): the groups flagged in that organization's own weekly windows, each analysed as soon as it ended a label delay ago, latest windows last. Each group lists its members: `customer_ids` and `merchants` (ids), `members` their number.",
        response: { 200: MetricsRings, ...errors, 401: ErrorResponse },
      },
    },
    async (request) => {
      const m = app.models.metrics();
      let key: AuthenticatedKey | undefined;
      if (request.headers.authorization !== undefined) {
        await keyAuthentication(app.keys)(request);
        key = request.apiKey!;
      }
      return { model_id: m.model_id, evaluation: m.rings, live: await app.rings.list(key ? OrganizationCaller.key(key) : undefined) };
    },
  );

  r.get(
    '/api/datasets/format',
    { schema: { tags: ['datasets'], summary: 'Columns required in an uploaded CSV', response: { 200: DatasetFormat } } },
    async () => ({
      required: [
        { name: 'amount', type: 'number', rule: 'not negative; digits and a decimal point only (no currency symbols or thousands separators)' },
        { name: 'customer_id', type: 'string', rule: 'identifies the payer' },
        { name: 'merchant_id', type: 'string', rule: 'identifies the payee' },
      ],
      optional: [
        { name: 'transaction_id', type: 'string', rule: 'your reference; row number when absent' },
        { name: 'timestamp', type: 'string', rule: 'ISO 8601 or epoch seconds; without it, row order is time order' },
        { name: 'location', type: 'string', rule: '`unknown` when absent' },
        {
          name: 'payment_type',
          type: 'string',
          rule: 'card_present, card_not_present, wallet or bank_transfer are known to the model; others count as unknown',
        },
        { name: 'label', type: 'integer', rule: '1 fraud, 0 legitimate; when present the job also reports how the model did on the file' },
      ],
      column_mapping:
        'Map these names to your own headers, e.g. {"amount": "Amount", "customer_id": "nameOrig"}; and columns of your own onto the fields your organization declared, under "fields", e.g. {"fields": {"email_domain": "Email Domain"}}: a history import stores them with each row.',
      encoding: 'UTF-8 (a byte-order mark is accepted), comma-separated, first line the header, quoted fields allowed',
      limits: { max_upload_mb: app.config.MAX_UPLOAD_MB, max_dataset_rows: app.config.MAX_DATASET_ROWS },
    }),
  );

  r.get(
    '/api/datasets/example',
    { schema: { tags: ['datasets'], summary: 'Details of the built-in example dataset', response: { 200: ExampleDataset } } },
    async () => app.sandbox.example(),
  );

  r.get(
    '/api/training/limits',
    { schema: { tags: ['training'], summary: 'Training limits enforced by this server', response: { 200: TrainingLimits } } },
    async () => ({
      max_training_rows: app.config.MAX_TRAINING_ROWS,
      max_upload_mb: app.config.MAX_UPLOAD_MB,
      max_jobs_per_org_per_day: app.config.MAX_JOBS_PER_ORG_PER_DAY,
      requires: [
        'signed in (and a member of the organization named, if any)',
        'a dataset the caller can see that has not expired and validates',
        `at most ${app.config.MAX_TRAINING_ROWS} rows`,
        'a label column with both classes',
        "the organization's daily job quota",
      ],
      training_available: false,
      note: "Training through the API is not built: POST /api/training/jobs runs its checks and answers 501 with the command that runs it. Train from the command line with `npm run train -- --data FILE.csv`, or from an organization's own data with `npm run train -- --organization ORG_ID`.",
      features: Object.fromEntries(Object.entries(CHANNEL_FEATURES).map(([c, f]) => [c, f.length])),
    }),
  );
}
