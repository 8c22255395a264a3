// Scoring and recording as a use case, in memory: the real scorer (built-in model, real addon) and
// an organization's real Tenant, whose stored transactions and decision log are in-memory stand-ins
// that keep what a commit stores. What a payment team relies on without any server or database:
// a new id is scored and recorded once, with its answer's phases timed; a retry with the same
// values gets the stored answer back byte for byte, whether its commit is still in flight or done;
// other values under that id are refused; concurrent copies record one transaction; another
// organization may use the same id; what is recorded is in the organization's history for its
// next score; without a model nothing is scored.

import t from 'tap';
import { AppError } from '../../src/app/errors.ts';
import { ScoreAndRecord, type ScoreAndRecordDeps } from '../../src/app/score-and-record.ts';
import { ScoreRequest } from '../../src/contract/score.ts';
import { Tenant } from '../../src/live/tenant.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem, type ModelBundle } from '../../src/model/bundle-types.ts';
import { Scorer } from '../../src/scoring/scorer.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import type { OrganizationTransactions } from '../../src/storage/organization-data.ts';

const loaded = loadModelFolder('models/builtin');
if (isProblem(loaded)) throw new Error(loaded.message);
const bundle: ModelBundle = loaded;
// A clock a second on at each score: two scores in the same millisecond (a fast machine) would be
// at the same time, and a transaction sees only strictly older ones.
let now = Date.UTC(2026, 10, 1);
const scorer = new Scorer({ bundle, clock: () => (now += 1_000) });

/** An organization in memory: its Tenant, over stored transactions the log's commits fill. */
function organization(id: string) {
  const rows = new Map<string, NewTransaction>();
  const stored = {
    earlier: async () => [],
    response: async (transactionId: string) => rows.get(transactionId)?.response ?? undefined,
    get: async (transactionId: string) => rows.get(transactionId),
  } as unknown as OrganizationTransactions;
  return { id, rows, tenant: new Tenant(id, stored, bundle.file.training.label_delay_ms) };
}

/** The decision log with commit durability, in memory: a commit settles on a later turn (as a group
 *  commit does), stores the row and hands it to the organization's history, or answers false when
 *  the organization already has the id. */
function decisionLog(orgs: Map<string, ReturnType<typeof organization>>) {
  const committing = new Map<string, Promise<boolean>>();
  const bodies = new Map<string, string>();
  const commits: string[] = [];
  const log: ScoreAndRecordDeps['decisionLog'] = {
    durability: 'commit',
    inFlight: (org, tx) => committing.get(`${org}/${tx}`),
    pendingResponse: (org, tx) => bodies.get(`${org}/${tx}`),
    push: () => {
      throw new Error('write-behind is not this log');
    },
    commit(orgId, row) {
      const k = `${orgId}/${row.transaction_id}`;
      if (row.response) bodies.set(k, row.response);
      const done = new Promise<boolean>((resolve) =>
        setImmediate(() => {
          const org = orgs.get(orgId)!;
          const fresh = !org.rows.has(row.transaction_id);
          if (fresh) {
            org.rows.set(row.transaction_id, row);
            const { transaction_id, time, amount, customer_id, merchant_id, location, payment_type } = row;
            org.tenant.add({ transaction_id, time, amount, customer_id, merchant_id, location, payment_type });
            commits.push(k);
          }
          committing.delete(k);
          bodies.delete(k);
          resolve(fresh);
        }),
      );
      committing.set(k, done);
      return done;
    },
  };
  return { log, commits };
}

function service(o: { withModel?: boolean } = {}) {
  const orgs = new Map(['acme', 'other'].map((id) => [id, organization(id)]));
  const { log, commits } = decisionLog(orgs);
  const useCase = new ScoreAndRecord({
    model: o.withModel === false ? { reason: 'model_unavailable', message: 'no model', fix: 'load one' } : bundle,
    scorer: o.withModel === false ? undefined : scorer,
    scorerFor: async () => undefined,
    tenants: { loadedNow: (id) => orgs.get(id)?.tenant, get: async (id) => orgs.get(id)!.tenant },
    decisionLog: log,
  });
  const key = (organization_id: string) => ({ id: `key-${organization_id}`, organization_id, active_model_id: null });
  const score = (org: string, body: unknown) => useCase.score(key(org), ScoreRequest.parse(body));
  return { orgs, commits, score };
}

const payment = { amount: 55.5, customer_id: 'c-1', merchant_id: 'm-1', transaction_id: 'order-1', location: 'Lisbon', payment_type: 'card_present' };

t.test('a new id is scored, recorded once, and its phases timed', async (t) => {
  const s = service();
  const first = await s.score('acme', payment);
  t.equal(first.replayed, false);
  const answer = JSON.parse(first.body);
  t.equal(answer.transaction_id, 'order-1');
  t.ok(answer.risk_score > 0 && answer.risk_score < 1, `a probability: ${answer.risk_score}`);
  t.same(s.commits, ['acme/order-1'], 'one commit');
  t.equal(s.orgs.get('acme')!.rows.get('order-1')!.response, first.body, 'the answer stored is the answer sent');
  t.same(
    first.timing!.laps.map((l) => l.name),
    ['prepare', 'score', 'serialize', 'commit'],
    "the use case's phases",
  );
  t.same(
    answer.stages.map((l: { name: string }) => l.name),
    ['history', 'features', 'model', 'rules', 'explain', 'evidence', 'record'],
    "the scorer's stages",
  );
});

t.test('a retry gets the stored answer back; other values under the id are refused', async (t) => {
  const s = service();
  const first = await s.score('acme', payment);
  const again = await s.score('acme', { ...payment, location: 'Porto', mode: 'high_recall' });
  t.same({ replayed: again.replayed, body: again.body }, { replayed: true, body: first.body }, 'byte for byte, the other fields ignored');
  t.equal(again.timing, undefined, 'nothing scored, nothing timed');
  for (const change of [{ amount: 55.51 }, { customer_id: 'someone-else' }, { merchant_id: 'elsewhere' }]) {
    const refused = await s.score('acme', { ...payment, ...change }).catch((e: unknown) => e);
    t.ok(refused instanceof AppError && refused.reason === 'duplicate_transaction', `${JSON.stringify(change)}: duplicate_transaction`);
    t.match((refused as AppError).fix, /same amount, customer_id and merchant_id/);
  }
  t.same(s.commits, ['acme/order-1'], 'still one commit');
  const elsewhere = await s.score('other', payment);
  t.equal(elsewhere.replayed, false, 'another organization may use the same id');
  t.same(s.commits, ['acme/order-1', 'other/order-1']);
});

t.test('concurrent copies of one id record one transaction, and all get its answer', async (t) => {
  const s = service();
  const answers = await Promise.all(Array.from({ length: 6 }, () => s.score('acme', { ...payment, transaction_id: 'burst' })));
  t.equal(answers.filter((a) => a.replayed).length, 5, 'one scored, five replayed');
  t.equal(new Set(answers.map((a) => a.body)).size, 1, 'the same body');
  t.same(s.commits, ['acme/burst']);
});

t.test("what is recorded is in the organization's history for its next score, and only its", async (t) => {
  const s = service();
  const before = JSON.parse((await s.score('acme', payment)).body);
  t.equal(before.entity_history['c-1'].prior_transactions, 0, 'a new customer');
  const next = JSON.parse((await s.score('acme', { ...payment, transaction_id: 'order-2', amount: 20 })).body);
  t.equal(next.entity_history['c-1'].prior_transactions, 1, 'the recorded payment is its past');
  t.same(
    next.graph_evidence['c-1'].map((e: { transaction_id: string }) => e.transaction_id),
    ['order-1'],
    'and its evidence',
  );
  const other = JSON.parse((await s.score('other', { ...payment, transaction_id: 'order-9' })).body);
  t.equal(other.entity_history['c-1'].prior_transactions, 0, "another organization's history does not have it");
});

t.test('without a model nothing is scored or recorded', async (t) => {
  const s = service({ withModel: false });
  const refused = await s.score('acme', payment).catch((e: unknown) => e);
  t.ok(refused instanceof AppError && refused.reason === 'model_unavailable', `model_unavailable (${(refused as Error).message})`);
  t.same(s.commits, []);
});
