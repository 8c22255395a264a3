// The rule language and lists as pure code: what the checker accepts and refuses (with line and
// column; a list compared with a field of another kind too), what an evaluation reads and how a
// missing value fails safely, the precedence of actions, a list's items now whatever order their
// changes arrive in, a list as it was at any time, and the packed decision inputs read back
// exactly.

import t from 'tap';
import { BUILT_IN_LANGUAGE, checkExpression, compileRule, evaluateRule, MAX_EXPRESSION_CHARS, position } from '../../src/domain/rules/expression.ts';
import { decide, decidingAction, ruleInput, valuesRead, type DecisionValues } from '../../src/domain/rules/decide.ts';
import { CurrentItems, ItemHistory, type ItemStay } from '../../src/domain/rules/lists.ts';
import { packInputs, unpackInputs } from '../../src/storage/decision-inputs.ts';

const values: DecisionValues = {
  time: Date.UTC(2026, 10, 22, 3, 30), // a Sunday, 03:30 UTC
  amount: 2500,
  customer_id: 'c-1',
  merchant_id: 'm-1',
  location: 'NG',
  payment_type: 'card',
  mode: 'balanced',
  risk_score: 0.2,
  risk_band: 'high',
  cold: false,
  channel_scores: { tabular: 0.1, behavioral: 0.2, velocity: 0.3, graph: 0.6 },
  priors: { customer: 0, merchant: 12, channel: 3 },
};
const input = ruleInput(values, () => new Map([['amount_zscore_customer', 2.5]]), BUILT_IN_LANGUAGE);
const lists = new Set(['blocked']);
const run = (expression: string, lookup = (_id: string, _v: string) => false) =>
  evaluateRule(
    compileRule({ id: 'r', name: 'r', version: 1, action: 'block', status: 'active', expression, lists: new Map([['blocked', 'L1']]) }, BUILT_IN_LANGUAGE),
    input,
    lookup,
  );

t.test('every field reads what the decision saw', async (t) => {
  for (const e of [
    'amount > 2000.0 && amount > 2000',
    'customer_id == "c-1" && merchant_id == "m-1" && location == "NG" && payment_type == "card"',
    'channel == "card:NG" && mode == "balanced"',
    'hour == 3 && weekday == 0',
    'risk_score > 0.1 && risk_band == "high" && path == "MODEL"',
    'channel_scores.graph > 0.5 && channel_scores["tabular"] < 0.2',
    'features.amount_zscore_customer > 2.0',
    'customer.is_new && customer.prior_transactions == 0 && !merchant.is_new && merchant.prior_transactions == 12 && channel_history.prior_transactions == 3',
    'location in ["NG", "GH"] && customer_id.startsWith("c-") && size(merchant_id) == 3',
    '[1, 2, 3].exists(x, x == 2)',
  ]) {
    t.same(checkExpression(e, BUILT_IN_LANGUAGE, lists).problems, [], e);
    t.same(run(e), { matched: true }, e);
  }
  t.same(
    run('in_list("blocked", " c-1 ")', (id, v) => id === 'L1' && v === 'c-1'),
    { matched: true },
    'in_list compares after trimming',
  );
  t.same(
    valuesRead(input, checkExpression('amount > 1.0 && customer.is_new', BUILT_IN_LANGUAGE, lists).checked!.fields),
    { amount: 2500, customer: { prior_transactions: 0, is_new: true } },
    'the values an expression read',
  );
});

t.test('a missing value or a probe of the runtime does not match, and says why', async (t) => {
  t.match(run('features.not_a_feature > 1.0'), { matched: false, error: /No such key/ });
  t.match(run('channel_scores["__proto__"] > 0.0'), { matched: false, error: /No such key/ });
  t.match(run('channel_scores["constructor"] > 0.0'), { matched: false, error: /No such key/ });
  let built = 0;
  const lazy = ruleInput(
    values,
    () => {
      built += 1;
      return new Map();
    },
    BUILT_IN_LANGUAGE,
  );
  evaluateRule(
    compileRule({ id: 'r', name: 'r', version: 1, action: 'block', status: 'active', expression: 'amount > 1.0', lists: new Map() }, BUILT_IN_LANGUAGE),
    lazy,
    () => false,
  );
  t.equal(built, 0, 'features are built only for a rule that reads them');
});

t.test("a list compared with a field must hold that field's values (or be a text list)", async (t) => {
  const kinds = new Map([
    ['blocked', 'customer_id' as const],
    ['notes', 'text' as const],
    ['routes', 'channel' as const],
  ]);
  const known = new Set(kinds.keys());
  const problems = (e: string) => checkExpression(e, BUILT_IN_LANGUAGE, known, kinds).problems;
  t.match(problems('in_list("blocked", merchant_id)'), [
    {
      line: 1,
      column: 20,
      message:
        'The list "blocked" holds customer_id values, but in_list compares it with merchant_id: compare it with customer_id, or use a list of kind merchant_id (or text) for merchant_id.',
    },
  ]);
  t.match(problems('in_list("routes", risk_band)'), [{ message: /use a list of kind text for risk_band/ }]);
  for (const e of [
    'in_list("blocked", customer_id)',
    'in_list("notes", merchant_id)',
    'in_list("routes", channel)',
    'in_list("routes", payment_type + ":" + location)',
    'in_list("blocked", " c-1 ")',
  ])
    t.same(problems(e), [], e);
  t.same(
    checkExpression('in_list("blocked", merchant_id)', BUILT_IN_LANGUAGE, known).problems,
    [],
    'without kinds (a saved version tested as it was saved), not checked',
  );
});

t.test('the checker refuses with line and column', async (t) => {
  const at = (e: string) => checkExpression(e, BUILT_IN_LANGUAGE, lists).problems[0];
  t.match(at('amount > 1.0 &&\n  custome_id == "x"'), { line: 2, column: 3, message: /Unknown variable: custome_id/ });
  t.match(at('in_list("nope", customer_id)'), { line: 1, column: 9, message: /no list named "nope"/ });
  t.match(at('in_list(customer_id, "x")'), { message: /quoted string/ });
  t.match(at('amount'), { message: /needs true or false/ });
  t.match(at('"a" + 1 == "a1"'), { message: /overload/ });
  t.match(at('customer.constructor'), { message: /constructor/ });
  t.match(at('this'), { message: /Unknown variable: this/ });
  t.match(at('customer_id.matches("a")'), { message: /matches\(\) is not available/ });
  t.match(at('matches(customer_id, "a")'), { message: /matches\(\) is not available/ });
  t.match(at('[1].all(x, [1].exists(y, x == y))'), { message: /inside another comprehension/ });
  t.match(at(`${'('.repeat(33)}true${')'.repeat(33)}`), { message: /maxDepth/ });
  t.match(at('x'.repeat(MAX_EXPRESSION_CHARS + 1)), { message: /at most 4000/ });
  t.match(at('   '), { message: /empty/ });
  t.same(position('ab\ncd', 4), { line: 2, column: 2 });
});

t.test('allow, then block, then review, then the model', async (t) => {
  t.equal(decidingAction(['review', 'block', 'allow']), 'allow');
  t.equal(decidingAction(['review', 'block']), 'block');
  t.equal(decidingAction(['review']), 'review');
  t.equal(decidingAction([]), undefined);
  t.equal(decide('block', 'review'), 'review', 'a review match turns a model block into a review');
  t.equal(decide('review', undefined), 'review', 'no match: the model decides');
  t.equal(decide('block', 'allow'), 'approve');
});

const stay = (id: number, value: string, added: number, o: Partial<ItemStay> = {}): ItemStay => ({
  id,
  list_id: 'L',
  value,
  added_at_ms: added,
  expires_at_ms: null,
  removed_at_ms: null,
  ...o,
});

t.test("a list's items now, whatever order their changes arrive in", async (t) => {
  const inOrder = new CurrentItems();
  const reversed = new CurrentItems();
  // v added (1), removed (1 ended), added again (2); w added with an expiry.
  const changes = [stay(1, 'v', 10), stay(1, 'v', 10, { removed_at_ms: 20 }), stay(2, 'v', 30), stay(3, 'w', 10, { expires_at_ms: 50 })];
  for (const c of changes) inOrder.apply(c);
  for (const c of [...changes].reverse()) reversed.apply(c);
  for (const items of [inOrder, reversed]) {
    t.ok(items.has('L', 'v', 40));
    t.ok(items.has('L', 'w', 40));
    t.notOk(items.has('L', 'w', 50), 'expired');
    t.notOk(items.has('L2', 'v', 40), 'another list');
  }
});

t.test('a list as it was at any time', async (t) => {
  const h = new ItemHistory();
  h.add(stay(1, 'v', 10, { removed_at_ms: 20 }));
  h.add(stay(2, 'v', 30, { expires_at_ms: 40 }));
  t.same(
    [5, 10, 19, 20, 25, 30, 39, 40].map((at) => h.has('L', 'v', at)),
    [false, true, true, false, false, true, true, false],
  );
});

t.test('decision inputs read back exactly', async (t) => {
  const packed = packInputs(values);
  t.same(unpackInputs(packed), { cold: values.cold, channel_scores: values.channel_scores, priors: values.priors });
  t.equal(unpackInputs(packed.subarray(1)), undefined, 'another layout is not read');
});
