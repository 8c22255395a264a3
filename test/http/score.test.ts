// POST /api/risk/score through the real app (real model, the public sandbox, real database), on each
// storage back end: every field of the specification, the channel and reason arithmetic, cold
// start, notes for missing optional fields and for values the model does not know, modes, and bad
// input answered with a clear 4xx that stores nothing (unknown fields named, a body other than JSON
// 415). (Organizations' scoring and recording: test/live.)

import t from 'tap';
import { backends, freshDatabase, start, tempDir } from '../support/server.ts';

const score = (app: Awaited<ReturnType<typeof start>>['app'], body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/api/risk/score',
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });

for (const backend of backends()) {
  t.test(`scoring on ${backend.name}`, async (t) => {
    const dataDir = tempDir('data-');
    const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
    const running = await start({ backend, dataDir, databaseUrl: db?.url });
    t.teardown(async () => {
      await running.close();
      await db?.drop();
    });
    const { service } = running;
    const sandbox = (await service.sandbox.built()).history;
    const known = sandbox.recent('customer', 'C000001', Infinity, 1)[0];
    t.ok(known, 'the example history is the sandbox');
    const countTransactions = async () => (await service.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions'))[0]!.n;

    await t.test('a known customer at a known merchant: every field of the specification', async (t) => {
      const before = sandbox.size;
      const res = await score(running.app, {
        amount: 42.5,
        customer_id: known!.customer_id,
        merchant_id: known!.merchant_id,
        location: known!.location,
        payment_type: known!.payment_type,
        transaction_id: 'order-1',
      });
      t.equal(res.statusCode, 200, res.body);
      const r = res.json();
      for (const f of [
        'transaction_id',
        'risk_score',
        'risk_band',
        'decision',
        'mode',
        'model_id',
        'model_version',
        'path',
        'review_threshold',
        'block_threshold',
        'channel_scores',
        'channel_attribution',
        'reasons',
        'entity_history',
        'graph_evidence',
        'related_ring',
        'stages',
        'latency_ms',
        'notes',
      ]) {
        t.ok(f in r, `has ${f}`);
      }
      t.equal(r.transaction_id, 'order-1');
      t.ok(r.risk_score > 0 && r.risk_score < 1);
      t.equal(r.mode, 'balanced');
      t.equal(r.path, 'MODEL');
      t.equal(r.model_id, (service.model as { file: { id: string } }).file.id);
      t.ok(['low', 'medium', 'high', 'critical'].includes(r.risk_band));
      t.equal(r.decision, r.risk_score >= r.block_threshold ? 'block' : r.risk_score >= r.review_threshold ? 'review' : 'approve');
      t.same(Object.keys(r.channel_scores).sort(), ['behavioral', 'graph', 'tabular', 'velocity']);
      const attribution = Object.values(r.channel_attribution as Record<string, number>);
      t.ok(Math.abs(attribution.reduce((a, b) => a + Math.abs(b), 0) - 1) < 1e-9, 'attribution: absolute shares add up to 1');
      t.ok(r.reasons.length > 0 && r.reasons.length <= 5);
      for (const reason of r.reasons) {
        t.match(reason.text, /(added|took) [\d.]+ (to|from) the log-odds of fraud/, 'worded as contribution');
        t.equal(reason.direction, reason.contribution >= 0 ? 'increases' : 'decreases');
      }
      const abs = r.reasons.map((x: { contribution: number }) => Math.abs(x.contribution));
      t.same(
        abs,
        [...abs].sort((a, b) => b - a),
        'reasons ordered by size',
      );
      t.equal(r.entity_history[known!.customer_id].role, 'customer');
      t.ok(r.entity_history[known!.customer_id].prior_transactions > 0);
      t.equal(r.entity_history[known!.merchant_id].is_new, false);
      const evidence = Object.values(r.graph_evidence as Record<string, { time: string; relation: string; outcome: string }[]>).flat();
      t.ok(evidence.length > 0, 'graph evidence of earlier transactions');
      const asOf = service.sandbox.asOf;
      for (const e of evidence) {
        t.ok(Date.parse(e.time) < asOf, "evidence is older than the scored transaction (the sandbox's moment)");
        t.ok(['same_customer', 'same_merchant', 'same_channel'].includes(e.relation));
        t.ok(['fraud', 'legit', 'unknown'].includes(e.outcome));
      }
      t.same(
        r.stages.map((s: { name: string }) => s.name),
        ['history', 'features', 'model', 'explain', 'evidence'],
      );
      t.ok(r.latency_ms >= r.stages.reduce((a: number, s: { ms: number }) => a + s.ms, 0) - 0.01);
      t.equal(r.notes.length, 1, 'nothing missing: only the sandbox note');
      t.match(r.notes[0], /What-if/);
      t.equal(sandbox.size, before, 'nothing joined the sandbox');
    });

    await t.test('explain=false gives the same score without reasons', async (t) => {
      const body = {
        amount: 19.99,
        customer_id: known!.customer_id,
        merchant_id: known!.merchant_id,
        location: known!.location,
        payment_type: known!.payment_type,
      };
      const a = (await score(running.app, { ...body, explain: false })).json();
      t.same(a.reasons, []);
      t.notOk(a.stages.some((s: { name: string }) => s.name === 'explain'));
      t.match(a.notes.join(' '), /explain was false/);
    });

    await t.test('everything new: COLD_START, the floor, and notes for missing fields', async (t) => {
      const r = (await score(running.app, { amount: 10, customer_id: 'brand-new-customer', merchant_id: 'brand-new-merchant' })).json();
      t.equal(r.path, 'COLD_START');
      const model = (service.model as { file: { cold_start: { floor: number } } }).file;
      t.ok(r.risk_score >= model.cold_start.floor, 'raised to at least the floor');
      t.match(r.transaction_id, /^tx_/);
      const notes = r.notes.join('\n');
      t.match(notes, /transaction_id was not given/);
      t.match(notes, /location was not given/);
      t.match(notes, /payment_type was not given/);
      t.match(notes, /COLD_START/);
      t.equal(r.entity_history['brand-new-customer'].is_new, true);
      t.ok(r.entity_history['unknown:unknown'], 'the channel is payment_type:location, unknown:unknown here');
    });

    await t.test('a payment type or location the model does not know is named in the notes', async (t) => {
      const body = { amount: 19.99, customer_id: known!.customer_id, merchant_id: known!.merchant_id };
      const r = (await score(running.app, { ...body, payment_type: 'card', location: 'Atlantis' })).json();
      t.ok(
        r.notes.includes(
          'payment_type "card" is not a value the model knows: scored as unknown, like a missing one; map your values onto GET /api/risk/known-values.',
        ),
        r.notes.join('\n'),
      );
      t.ok(
        r.notes.some((n: string) => /^location "Atlantis" is not a value the model knows .*GET \/api\/risk\/known-values\.$/.test(n)),
        'and the location',
      );
      const same = (await score(running.app, { ...body, payment_type: 'card', location: known!.location })).json();
      const left = (await score(running.app, { ...body, payment_type: 'unknown', location: known!.location })).json();
      t.equal(same.channel_scores.tabular, left.channel_scores.tabular, 'the tabular channel sees it as it sees "unknown"');
      t.notOk(
        left.notes.some((n: string) => n.includes('not a value the model knows')),
        '"unknown" is not named',
      );
      const knownOnes = (await score(running.app, { ...body, payment_type: known!.payment_type, location: known!.location })).json();
      t.notOk(
        knownOnes.notes.some((n: string) => n.includes('not a value the model knows')),
        'known values: no such note',
      );
      t.same(
        (await running.app.inject({ url: '/api/risk/known-values' })).json().locations,
        [...service.sandbox.locations],
        "the locations listed are the sandbox's, the built-in model's training data",
      );
    });

    await t.test('each mode uses its own thresholds', async (t) => {
      const body = { amount: 250, customer_id: known!.customer_id, merchant_id: known!.merchant_id };
      const seen = new Set<string>();
      for (const mode of ['balanced', 'high_precision', 'high_recall']) {
        const r = (await score(running.app, { ...body, mode })).json();
        t.equal(r.mode, mode);
        const th = (service.model as { file: { thresholds: Record<string, { review: number; block: number }> } }).file.thresholds[mode]!;
        t.equal(r.review_threshold, th.review);
        t.equal(r.block_threshold, th.block);
        seen.add(`${r.review_threshold}/${r.block_threshold}`);
      }
      t.equal(seen.size, 3);
    });

    await t.test('bad input: clear 4xx with a reason, nothing stored changes', async (t) => {
      const storedBefore = await countTransactions();
      const historyBefore = sandbox.size;
      const cases: [string, unknown, number, string, RegExp?][] = [
        ['amount as a string', { amount: '12', customer_id: 'c', merchant_id: 'm' }, 422, 'validation_failed', /amount/],
        ['negative amount', { amount: -1, customer_id: 'c', merchant_id: 'm' }, 422, 'validation_failed', /amount must not be negative/],
        ['missing merchant_id', { amount: 1, customer_id: 'c' }, 422, 'validation_failed', /merchant_id/],
        ['empty customer_id', { amount: 1, customer_id: '', merchant_id: 'm' }, 422, 'validation_failed', /customer_id/],
        ['unknown mode', { amount: 1, customer_id: 'c', merchant_id: 'm', mode: 'paranoid' }, 422, 'validation_failed', /mode/],
        ['explain not boolean', { amount: 1, customer_id: 'c', merchant_id: 'm', explain: 'yes' }, 422, 'validation_failed', /explain/],
        ['a field the API does not have', { amount: 1, customer_id: 'c', merchant_id: 'm', card_number: '4111' }, 422, 'validation_failed', /card_number/],
        ['an array body', [1, 2], 422, 'validation_failed'],
        ['malformed JSON', '{"amount": 1,', 400, 'bad_request'],
        // A field far too long is still read, and named with its length.
        [
          'a 100 KB customer_id',
          { amount: 1, customer_id: 'x'.repeat(100 * 1024), merchant_id: 'm' },
          422,
          'validation_failed',
          /body\.customer_id.*customer_id is at most 200 characters/,
        ],
        ['oversized body', JSON.stringify({ amount: 1, customer_id: 'x'.repeat(2 << 20), merchant_id: 'm' }), 413, 'payload_too_large'],
      ];
      for (const [name, body, status, reason, detail] of cases) {
        const res = await score(running.app, body);
        t.equal(res.statusCode, status, `${name}: ${status}`);
        const b = res.json();
        t.equal(b.detail.reason, reason, `${name}: ${reason}`);
        t.type(b.detail.message, 'string');
        t.type(b.detail.fix, 'string');
        t.notMatch(res.body, /at .*\.ts:\d+|node_modules|\/work\//, `${name}: no stack trace or server path`);
        if (status === 422) {
          t.ok(Array.isArray(b.detail.fields) && b.detail.fields.length > 0, `${name}: detail.fields lists the problem`);
          if (detail) t.match(JSON.stringify(b.detail.fields), detail);
        }
        if (status === 413) {
          // Past the body's limit, nothing is read: the answer gives the sizes and every field's length.
          t.match(b.detail.message, /\(2097\d+ bytes\) is larger than this endpoint accepts \(1048576 bytes\)/, `${name}: the sizes`);
          t.match(b.detail.fix, /customer_id 200, merchant_id 200, transaction_id 200, location 200, payment_type 100/, `${name}: each field's length`);
        }
      }
      // Unknown fields (the schema is strict) are each named in detail.fields, not as `body`.
      const unknown = (await score(running.app, { amount: 1, customer_id: 'c', merchant_id: 'm', foo: 1, card_number: '4111' })).json();
      t.equal(unknown.detail.reason, 'validation_failed');
      t.same(
        unknown.detail.fields.map((f: { path: string }) => f.path),
        ['body.foo', 'body.card_number'],
        'each unknown field named',
      );
      t.match(unknown.detail.fields[0].message, /unknown field/);
      // White space alone is refused like an empty id: one problem, and the reference says so.
      const blank = (await score(running.app, { amount: 1, customer_id: '\f \u3000', merchant_id: 'm' })).json();
      t.same(blank.detail.fields, [{ path: 'body.customer_id', message: 'customer_id must not be empty or white space only' }]);
      const padded = await score(running.app, { amount: 1, customer_id: ' c\t', merchant_id: 'm', explain: false });
      t.equal(padded.statusCode, 200, 'white space around an id is trimmed, not refused');
      t.ok(padded.json().entity_history.c, 'and the id is the trimmed one');
      // Only JSON: a form, plain text, a CSV or a multipart form is 415, never tried as JSON (422).
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'text/plain; charset=utf-8',
        'text/csv',
        'application/csv',
        'multipart/form-data; boundary=x',
      ]) {
        const wrongType = await running.app.inject({ method: 'POST', url: '/api/risk/score', payload: 'amount=1', headers: { 'content-type': type } });
        t.equal(wrongType.statusCode, 415, `${type}: 415`);
        t.equal(wrongType.json().detail.reason, 'unsupported_media_type');
        t.equal(wrongType.json().detail.fix, 'Send the body with Content-Type: application/json.');
      }
      t.equal(await countTransactions(), storedBefore, 'nothing was stored');
      t.equal(sandbox.size, historyBefore, 'nothing joined the sandbox');
    });
  });
}
