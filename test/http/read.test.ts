// Every public read endpoint through the real app, on each storage back end: health (API, model,
// database, auth_configured), config (limits, nothing secret), thresholds with meets_target, the
// payment types and locations the model knows, models, the evaluation (overview, charts,
// limitations, rings with their members), dataset format and example, training limits, the OpenAPI
// reference generated from the zod schemas, and unknown routes.

import t from 'tap';
import { backends, start } from '../support/server.ts';

for (const backend of backends()) {
  t.test(`read endpoints on ${backend.name}`, async (t) => {
    const running = await start({ backend, overrides: { SESSION_SECRET: 'a-secret-that-must-not-leak', MAX_UPLOAD_MB: 7 } });
    t.teardown(() => running.close());
    const get = async (url: string) => {
      const res = await running.app.inject({ method: 'GET', url });
      return { status: res.statusCode, body: res.json(), raw: res.body };
    };
    const model = (running.service.model as { file: { id: string; version: string } }).file;

    await t.test('health', async (t) => {
      const { status, body } = await get('/api/health');
      t.equal(status, 200);
      t.equal(body.status, 'ok');
      t.equal(body.api, 'ok');
      t.same(body.model, { status: 'ok', id: model.id, version: model.version, reason: null, message: null });
      t.same(body.database, { status: 'ok', kind: backend.name });
      t.equal(body.auth_configured, false, 'no identity provider configured');
      t.ok(body.history_transactions > 250_000);
      t.ok(
        Number.isFinite(body.startup_ms.sandbox) && body.startup_ms.sandbox >= 0,
        `the start-up steps include building the sandbox (${body.startup_ms.sandbox} ms)`,
      );
      t.equal(body.organizations_loaded, 0, 'no organization loaded before it is used');
      t.equal(body.transactions_held, 0, 'and no transaction held');
      const m = body.memory;
      t.ok(m.heap_used_mb > 0 && m.heap_used_mb <= m.heap_total_mb, `heap used ${m.heap_used_mb} of ${m.heap_total_mb} MB`);
      t.ok(m.rss_mb > m.heap_used_mb && m.rss_mb < 64 * 1024, `resident ${m.rss_mb} MB holds the heap in use`);
      t.ok(m.array_buffers_mb >= 0 && m.array_buffers_mb < m.rss_mb, `array buffers ${m.array_buffers_mb} MB, within the resident size`);
    });

    await t.test('config: limits, and no secret', async (t) => {
      const { status, body, raw } = await get('/api/config');
      t.equal(status, 200);
      t.equal(body.limits.max_upload_mb, 7, 'from the environment');
      t.equal(body.limits.max_dataset_rows, 100_000);
      t.equal(body.limits.score_rate_per_minute, 120);
      t.equal(body.auth_configured, false);
      t.notMatch(raw, /a-secret-that-must-not-leak/);
      t.notMatch(raw, /DATABASE_URL|postgres:\/\//);
    });

    await t.test('thresholds say whether each mode still meets its target', async (t) => {
      const { status, body } = await get('/api/risk/thresholds');
      t.equal(status, 200);
      t.same(Object.keys(body.modes).sort(), ['balanced', 'high_precision', 'high_recall']);
      for (const m of Object.values(body.modes) as {
        review_threshold: number;
        block_threshold: number;
        meets_target: boolean;
        target: { metric: string };
        review_rate: number;
        block_rate: number;
        fraud_caught_per_1000: number;
        review_warning: string | null;
      }[]) {
        t.ok(m.review_rate >= m.block_rate && m.review_rate <= 0.1, `review rate ${m.review_rate}, block rate ${m.block_rate}: what the mode costs`);
        t.ok(m.fraud_caught_per_1000 > 0);
        t.equal(m.review_warning, null, 'no mode of the built-in model swamps a review team');
        t.type(m.meets_target, 'boolean');
        t.ok(m.review_threshold <= m.block_threshold);
        t.type(m.target.metric, 'string');
      }
      const overview = (await get('/api/metrics/overview')).body;
      t.same(Object.keys(overview.splits), ['train', 'validation', 'test'], 'the three splits');
      for (const [name, split] of Object.entries(overview.splits) as [string, Record<string, number> & { intervals: Record<string, [number, number]> }][]) {
        for (const k of ['roc_auc', 'average_precision', 'recall_at_1pct_fpr', 'expected_calibration_error']) {
          const [low, high] = split.intervals[k]!;
          t.ok(low <= split[k]! && split[k]! <= high && low < high, `${name} ${k} ${split[k]} within its 95 % interval [${low}, ${high}]`);
        }
      }
      const spread = overview.seed_spread;
      t.equal(spread.runs.length, 3, 'the pipeline on three simulator seeds');
      t.equal(spread.runs[0].average_precision, overview.splits.test.average_precision, 'the first is the served model');
      t.ok(spread.average_precision.min <= spread.average_precision.max);
      t.match(
        overview.selection,
        { split: 'validation', settings_tried: 16, chosen: { iterations: Number } },
        'how the settings were chosen, and how many were tried',
      );
      t.ok(overview.selection.models_compared >= overview.selection.settings_tried);
      const gap = overview.comparisons.stack_minus_ablation.average_precision;
      t.ok(gap.interval[0] <= gap.difference && gap.difference <= gap.interval[1], `the stack-against-ablation gap ${gap.difference} with its interval`);
      for (const [mode, m] of Object.entries(body.modes) as [string, { review_rate: number; block_rate: number }][]) {
        t.same(
          [overview.modes[mode].review_rate, overview.modes[mode].block_rate],
          [m.review_rate, m.block_rate],
          `${mode}: the overview's modes carry the same rates`,
        );
      }
    });

    await t.test('the payment types and locations the model knows', async (t) => {
      const { status, body } = await get('/api/risk/known-values');
      t.equal(status, 200);
      t.equal(body.model_id, model.id);
      t.same(body.payment_types, ['card_present', 'card_not_present', 'wallet', 'bank_transfer'], "the tabular channel's codes");
      t.equal(body.locations.length, 12, "the sandbox's twelve cities");
      t.ok(body.locations.includes('Lisbon'));
      t.same(body.locations, [...body.locations].sort(), 'alphabetical');
      t.equal(Date.parse(body.sandbox_as_of), running.service.sandbox.asOf);
    });

    await t.test('models and one model', async (t) => {
      const list = await get('/api/models');
      t.equal(list.status, 200);
      t.equal(list.body.models.length, 1);
      t.equal(list.body.models[0].id, model.id);
      const one = await get(`/api/models/${model.id}`);
      t.equal(one.status, 200);
      t.same(Object.keys(one.body.weights).sort(), ['behavioral', 'graph', 'tabular', 'velocity']);
      t.ok(one.body.thresholds.balanced.block > 0);
      t.same(Object.keys(one.body.bands), ['low', 'medium', 'high', 'critical']);
      const missing = await get('/api/models/no-such-model');
      t.equal(missing.status, 404);
      t.equal(missing.body.detail.reason, 'not_found');
    });

    await t.test('evaluation endpoints, every figure labelled with its split', async (t) => {
      const overview = await get('/api/metrics/overview');
      t.equal(overview.status, 200);
      t.ok(overview.body.splits.test.roc_auc > 0.5);
      t.ok(overview.body.splits.validation.rows > 0);
      t.equal(overview.body.modes.split, 'test');
      t.equal(overview.body.comparisons.split, 'test');
      const charts = await get('/api/metrics/charts');
      t.equal(charts.body.split, 'test');
      t.ok(charts.body.roc.length > 10 && charts.body.precision_recall.length > 10 && charts.body.reliability.length === 10);
      const limitations = await get('/api/metrics/limitations');
      t.ok(limitations.body.limitations.length >= 3);
      const rings = await get('/api/metrics/rings');
      t.equal(rings.status, 200);
      t.equal(rings.body.evaluation.precision, 1);
      t.ok(rings.body.live.flagged_groups > 0, 'rings flagged over the live history');
      for (const g of rings.body.live.groups as { members: number; customers: number; customer_ids: string[]; merchants: string[] }[]) {
        t.equal(g.customer_ids.length, g.customers, 'a group lists its customers');
        t.equal(g.customer_ids.length + g.merchants.length, g.members, 'customers and merchants are its members');
      }
    });

    await t.test('datasets: format and the example', async (t) => {
      const format = await get('/api/datasets/format');
      t.same(
        format.body.required.map((c: { name: string }) => c.name),
        ['amount', 'customer_id', 'merchant_id'],
      );
      t.equal(format.body.limits.max_upload_mb, 7);
      const example = await get('/api/datasets/example');
      t.equal(example.status, 200);
      t.ok(example.body.rows > 250_000);
      t.ok(example.body.fraud_rate > 0.005 && example.body.fraud_rate < 0.03);
      t.ok(example.body.scenarios.card_testing > 0);
      t.equal(Date.parse(example.body.sandbox_as_of), running.service.sandbox.asOf, 'the sandbox scores as of this moment');
      t.ok(example.body.sandbox_as_of > example.body.last_transaction_at, "after the example's newest transaction");
    });

    await t.test('training limits', async (t) => {
      const { status, body } = await get('/api/training/limits');
      t.equal(status, 200);
      t.equal(body.max_training_rows, 200_000);
      t.equal(body.training_available, false);
    });

    await t.test('the OpenAPI reference comes from the validating schemas', async (t) => {
      const ui = await running.app.inject({ method: 'GET', url: '/api/docs' });
      t.ok(ui.statusCode === 200 || ui.statusCode === 302, 'the reference UI is served');
      const { status, body } = await get('/api/docs/json');
      t.equal(status, 200);
      t.match(body.openapi, /^3\./);
      const score = body.paths['/api/risk/score'].post;
      const schema = score.requestBody.content['application/json'].schema;
      t.same(schema.required.sort(), ['amount', 'customer_id', 'merchant_id']);
      t.equal(schema.properties.amount.minimum, 0, 'the negative-amount rule is in the reference');
      t.same(schema.properties.mode.enum, ['balanced', 'high_precision', 'high_recall']);
      t.ok(score.responses['200'].content['application/json'].schema.properties.risk_score);
      for (const path of [
        '/api/health',
        '/api/config',
        '/api/risk/thresholds',
        '/api/risk/known-values',
        '/api/models',
        '/api/models/{id}',
        '/api/metrics/overview',
        '/api/metrics/charts',
        '/api/metrics/limitations',
        '/api/metrics/rings',
        '/api/datasets/format',
        '/api/datasets/example',
        '/api/training/limits',
      ]) {
        t.ok(body.paths[path]?.get, `${path} documented`);
      }
      // The live-data surface: the decision log, outcomes and performance, with their rules.
      for (const [path, method] of [
        ['/api/v1/risk/score', 'post'],
        ['/api/v1/transactions/{transaction_id}', 'get'],
        ['/api/v1/transactions/{transaction_id}/outcome', 'post'],
        ['/api/v1/outcomes', 'post'],
        ['/api/organizations/{id}/transactions', 'get'],
        ['/api/organizations/{id}/transactions/{transaction_id}', 'get'],
        ['/api/organizations/{id}/transactions/{transaction_id}/outcome', 'post'],
        ['/api/organizations/{id}/performance', 'get'],
      ] as const) {
        t.ok(body.paths[path]?.[method], `${method.toUpperCase()} ${path} documented`);
      }
      t.ok(body.paths['/api/v1/risk/score'].post.responses['409'], 'the duplicate transaction answer is documented');
      const outcome = body.paths['/api/v1/transactions/{transaction_id}/outcome'].post.requestBody.content['application/json'].schema;
      t.same(outcome.properties.outcome.enum, ['fraud', 'legit']);
      t.same(outcome.properties.source.enum, ['chargeback', 'review', 'customer_report', 'other']);
      const bulk = body.paths['/api/v1/outcomes'].post.requestBody.content['application/json'].schema;
      t.equal(bulk.properties.outcomes.maxItems, 1000);
      const list = body.paths['/api/organizations/{id}/transactions'].get.parameters as { name: string; schema: { maximum?: number } }[];
      t.same(
        list
          .map((p) => p.name)
          .filter((n) => n !== 'id')
          .sort(),
        ['customer_id', 'decision', 'from', 'limit', 'merchant_id', 'order', 'outcome', 'risk_band', 'rule_id', 'starting_after', 'to'],
      );
      t.equal(list.find((p) => p.name === 'limit')!.schema.maximum, 100);
    });

    await t.test('unknown routes: 404 in the error shape', async (t) => {
      const { status, body } = await get('/api/nothing-here');
      t.equal(status, 404);
      t.equal(body.detail.reason, 'not_found');
      t.type(body.detail.fix, 'string');
    });
  });
}
