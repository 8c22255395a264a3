// A model or metrics file that is missing or corrupt makes the service say so (503 with its reason
// and a fix), never crash; and the scoring rate limit answers 429 with Retry-After. The loader is
// checked on real damaged copies of the built-in model folder; the HTTP answers on real servers
// started from such folders.

import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModelAndMetrics } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { modelCopy, start, tempDir } from '../support/server.ts';

t.test('the loader names what is wrong, for each kind of damage', async (t) => {
  const cases: [string, (dir: string) => void, 'model' | 'metrics', RegExp][] = [
    ['model.json missing', (d) => rmSync(join(d, 'model.json')), 'model', /builtin\/model\.json is missing/],
    ['model.json not JSON', (d) => writeFileSync(join(d, 'model.json'), '{"id": '), 'model', /model\.json is not valid JSON/],
    [
      'model.json without thresholds',
      (d) => {
        const m = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
        delete m.thresholds;
        writeFileSync(join(d, 'model.json'), JSON.stringify(m));
      },
      'model',
      /not a valid model description \(thresholds/,
    ],
    ['a booster file missing', (d) => rmSync(join(d, 'graph.txt')), 'model', /graph\.txt is missing or unreadable/],
    [
      'a booster file truncated',
      (d) => writeFileSync(join(d, 'velocity.txt'), readFileSync(join(d, 'velocity.txt'), 'utf8').slice(0, 5000)),
      'model',
      /velocity\.txt is not a usable LightGBM model \(model_malformed/,
    ],
    [
      'features that this server does not compute',
      (d) => {
        const m = JSON.parse(readFileSync(join(d, 'model.json'), 'utf8'));
        m.channels[1].features[0] = 'something_else';
        writeFileSync(join(d, 'model.json'), JSON.stringify(m));
      },
      'model',
      /behavioral channel was trained on other features/,
    ],
    ['metrics.json missing', (d) => rmSync(join(d, 'metrics.json')), 'metrics', /evaluation has not been run: builtin\/metrics\.json is missing/],
    ['metrics.json corrupt', (d) => writeFileSync(join(d, 'metrics.json'), 'nonsense'), 'metrics', /metrics\.json is not valid JSON/],
    [
      'metrics.json of another model',
      (d) => {
        const m = JSON.parse(readFileSync(join(d, 'metrics.json'), 'utf8'));
        m.model_id = 'fraud-other';
        writeFileSync(join(d, 'metrics.json'), JSON.stringify(m));
      },
      'metrics',
      /belongs to model fraud-other/,
    ],
  ];
  for (const [name, damage, part, message] of cases) {
    const dir = modelCopy();
    damage(dir);
    const loaded = loadModelAndMetrics(dir);
    const problem = loaded[part];
    t.ok(isProblem(problem), `${name}: ${part} unavailable`);
    if (!isProblem(problem)) continue;
    t.equal(problem.reason, part === 'model' ? 'model_unavailable' : 'evaluation_unavailable');
    t.match(problem.message, message, name);
    t.notMatch(problem.message, /\/tmp\//, `${name}: no server path`);
    t.match(problem.fix, /npm run train/);
    if (part === 'metrics') t.notOk(isProblem(loaded.model), `${name}: the model itself still loads`);
  }
});

t.test('over HTTP: 503 with the reason, and the rest keeps working', async (t) => {
  const dataDir = tempDir('data-');

  await t.test('no usable model: scoring and model routes 503, health says why', async (t) => {
    const dir = modelCopy();
    writeFileSync(join(dir, 'tabular.txt'), 'tree\nversion=v4\n');
    const running = await start({ dataDir, overrides: { MODEL_DIR: dir } });
    t.teardown(() => running.close());
    const score = await running.app.inject({ method: 'POST', url: '/api/risk/score', payload: { amount: 5, customer_id: 'c', merchant_id: 'm' } });
    t.equal(score.statusCode, 503);
    t.equal(score.json().detail.reason, 'model_unavailable');
    t.match(score.json().detail.message, /tabular\.txt is not a usable LightGBM model/);
    for (const url of ['/api/models', '/api/risk/thresholds']) {
      const res = await running.app.inject({ method: 'GET', url });
      t.equal(res.statusCode, 503, url);
      t.equal(res.json().detail.reason, 'model_unavailable');
    }
    const health = (await running.app.inject({ method: 'GET', url: '/api/health' })).json();
    t.equal(health.status, 'degraded');
    t.equal(health.model.status, 'unavailable');
    t.equal(health.model.reason, 'model_unavailable');
    t.equal(health.database.status, 'ok');
    const format = await running.app.inject({ method: 'GET', url: '/api/datasets/format' });
    t.equal(format.statusCode, 200, 'what does not need the model still answers');
  });

  await t.test('no evaluation: metrics routes 503, scoring works', async (t) => {
    const dir = modelCopy();
    writeFileSync(join(dir, 'metrics.json'), '{"model_id": 3}');
    const running = await start({ dataDir, overrides: { MODEL_DIR: dir } });
    t.teardown(() => running.close());
    for (const url of ['/api/metrics/overview', '/api/metrics/charts', '/api/metrics/limitations', '/api/metrics/rings']) {
      const res = await running.app.inject({ method: 'GET', url });
      t.equal(res.statusCode, 503, url);
      t.equal(res.json().detail.reason, 'evaluation_unavailable');
    }
    const thresholds = (await running.app.inject({ method: 'GET', url: '/api/risk/thresholds' })).json();
    t.equal(thresholds.modes.balanced.meets_target, null, 'whether targets hold is unknown without the evaluation');
    const score = await running.app.inject({ method: 'POST', url: '/api/risk/score', payload: { amount: 5, customer_id: 'C000002', merchant_id: 'M00002' } });
    t.equal(score.statusCode, 200);
  });

  await t.test('rate limit: a fixed window per client, 429 with Retry-After', async (t) => {
    const running = await start({ dataDir, overrides: { SCORE_RATE_PER_MINUTE: 3 } });
    t.teardown(() => running.close());
    const send = (ip: string) =>
      running.app.inject({
        method: 'POST',
        url: '/api/risk/score',
        remoteAddress: ip,
        payload: { amount: 5, customer_id: 'C000003', merchant_id: 'M00003', explain: false },
      });
    for (let i = 0; i < 3; i++) t.equal((await send('10.0.0.1')).statusCode, 200);
    const limited = await send('10.0.0.1');
    t.equal(limited.statusCode, 429);
    const body = limited.json();
    t.equal(body.detail.reason, 'rate_limited');
    t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After header');
    t.equal(body.detail.retry_after_seconds, Number(limited.headers['retry-after']));
    t.equal((await send('10.0.0.2')).statusCode, 200, 'another client has its own window');
    t.equal((await running.app.inject({ method: 'GET', url: '/api/health', remoteAddress: '10.0.0.1' })).statusCode, 200, 'read routes are not limited');
  });
});
