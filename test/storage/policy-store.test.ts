// Rules, lists and declared fields in the organization-scoped data layer, on both back ends: two
// organizations with lists, rules and fields of the same names, and every method of one
// organization's OrganizationData reads and changes its own only, whatever id or name it is handed
// (another organization's is simply not there); a list's stays read as they were at any time; what
// a process loads of an organization's rules, lists and fields comes from that organization alone.

import type { Db } from '../../src/storage/db.ts';
import type { PolicyLoader } from '../../src/storage/history-load.ts';
import type { ItemStay } from '../../src/domain/rules/lists.ts';
import type { FieldState } from '../../src/domain/fields.ts';
import type { RuleState } from '../../src/storage/rule-state.ts';
import { organizationData, type OrganizationData } from '../../src/storage/organization-data.ts';
import { eachBackend } from '../support/backends.ts';

async function twoOrganizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
}

const version = (expression: string, listIds: string[] = []) => ({ expression, action: 'block' as const, description: null, listIds });
const MAX = { maxItems: 1_000_000 };

/** What a process loads of an organization's rules and lists. */
async function policyOf(data: OrganizationData): Promise<{ rules: RuleState[]; stays: ItemStay[]; fields: FieldState[] }> {
  const got = { rules: [] as RuleState[], stays: [] as ItemStay[], fields: [] as FieldState[] };
  const policy: PolicyLoader = {
    rules: (r) => got.rules.push(...r),
    stays: (s) => got.stays.push(...s),
    fields: (f) => got.fields.push(...f),
    inboxes: () => {},
  };
  const nothing = { start() {}, uses() {}, transactions() {}, labels() {}, finish() {}, restore: () => false };
  await data.history.load(0, nothing, policy);
  return got;
}

eachBackend("one organization's rules and lists are its own, in every method", async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  const b = organizationData(db, 'org_b');
  const at = 1_800_000_000_000;

  const listA = await a.lists.create({ id: 'list_a', name: 'blocked', kind: 'customer_id', description: null, at, by: 'u1' });
  const listB = await b.lists.create({ id: 'list_b', name: 'blocked', kind: 'customer_id', description: null, at, by: 'u1' });
  t.ok(listA && listB, 'the same name in two organizations');
  t.equal(await a.lists.create({ id: 'list_a2', name: 'blocked', kind: 'text', description: null, at, by: 'u1' }), undefined, 'a name once per organization');
  t.match(await a.lists.addItems('list_a', ['c-1', 'c-2'], { reason: 'chargeback', expiresAt: null, at, by: 'u1', ...MAX }), { added: 2 });
  t.match(await b.lists.addItems('list_b', ['c-9'], { reason: null, expiresAt: null, at, by: 'u1', ...MAX }), { added: 1 });

  t.same(
    (await a.lists.all(at)).map((l) => [l.id, l.items]),
    [['list_a', 2]],
    "A's lists with A's counts",
  );
  t.equal((await b.lists.named('blocked', at))!.id, 'list_b', "B's list of that name is B's");
  t.same([...(await b.lists.names(['list_a', 'list_b']))], [['list_b', 'blocked']], "B cannot name A's list");
  t.same((await b.lists.items('list_a', { now: at, limit: 10 })).items, [], "B cannot page A's list");
  t.same(await b.lists.addItems('list_a', ['x'], { reason: null, expiresAt: null, at, by: 'u1', ...MAX }), { missing: true }, "B cannot add to A's list");
  t.match(await b.lists.removeItems('list_a', ['c-1'], at + 1, 'u1'), { removed: 0 }, "B cannot remove from A's list");
  t.equal(await b.lists.delete('list_a', at + 1, 'u1'), undefined, "B cannot delete A's list");
  const staysB: ItemStay[] = [];
  await b.lists.stays(['list_a', 'list_b'], (s) => staysB.push(...s));
  t.same(
    staysB.map((s) => s.value),
    ['c-9'],
    "B's stays only",
  );
  t.same(
    (await a.lists.items('list_a', { now: at, limit: 10 })).items.map((i) => i.value),
    ['c-1', 'c-2'],
    "A's list is whole",
  );

  // A list read as it was: c-1 removed later, c-2 replaced by a new stay.
  await a.lists.removeItems('list_a', ['c-1'], at + 10, 'u1');
  await a.lists.addItems('list_a', ['c-2'], { reason: 'again', expiresAt: null, at: at + 20, by: 'key:k1', ...MAX });
  t.same(
    (await a.lists.items('list_a', { now: at + 30, limit: 10 })).items.map((i) => [i.value, i.reason]),
    [['c-2', 'again']],
    'now',
  );
  t.same(
    (await a.lists.items('list_a', { now: at + 30, asOf: at + 5, limit: 10 })).items.map((i) => [i.value, i.reason, i.removed_at_ms]),
    [
      ['c-1', 'chargeback', at + 10],
      ['c-2', 'chargeback', at + 20],
    ],
    'as it was',
  );
  t.same((await a.lists.items('list_a', { now: at + 30, asOf: at - 1, limit: 10 })).items, [], 'before anything was added');

  // Rules of the same name in both; every rule method of B misses A's rule.
  t.same(
    await a.rules
      .create({ id: 'rule_a', name: 'Block', status: 'active', version: version('in_list("blocked", customer_id)', ['list_a']), at, by: 'u1' })
      .then((r) => typeof r),
    'object',
  );
  t.equal(typeof (await b.rules.create({ id: 'rule_b', name: 'Block', status: 'draft', version: version('amount > 1.0'), at, by: 'u1' })), 'object');
  t.equal(
    await a.rules.create({ id: 'rule_a2', name: 'Block', status: 'draft', version: version('amount > 2.0'), at, by: 'u1' }),
    'taken',
    'a name once per organization',
  );
  t.same(
    (await a.rules.all(0)).map((r) => r.id),
    ['rule_a'],
  );
  t.equal(await b.rules.one('rule_a', 0), undefined, "B cannot read A's rule");
  t.same(await b.rules.versions('rule_a'), [], 'nor its versions');
  t.equal(await b.rules.change('rule_a', { status: 'disabled' }, at, 'u1'), undefined, 'nor change it');
  t.equal(await b.rules.delete('rule_a', at, 'u1'), undefined, 'nor delete it');
  t.same(await b.rules.usingList('list_a'), [], "nor see what uses A's list");
  t.same(await a.rules.usingList('list_a'), ['Block'], 'A sees its rule using its list');
  t.same([await a.rules.count(), await b.rules.count()], [1, 1]);
  t.equal((await a.rules.one('rule_a', 0))!.status, 'active', "A's rule untouched by B");

  // What a process loads: each organization's own.
  const loadedA = await policyOf(a);
  t.same(
    loadedA.rules.map((r) => [r.id, r.status, r.lists]),
    [['rule_a', 'active', { blocked: 'list_a' }]],
    "A's evaluated rules, with the lists they name",
  );
  t.same(
    loadedA.stays.map((s) => s.value),
    ['c-2'],
    "A's current values",
  );
  const loadedB = await policyOf(b);
  t.same(loadedB.rules, [], "B's only rule is a draft: nothing evaluated");
  t.same(
    loadedB.stays.map((s) => s.value),
    ['c-9'],
  );

  // Declared fields: each organization's own, by the scope alone.
  const field = (name: string, type: 'string' | 'number', key = false) => ({ name, type, key, description: null, at, by: 'u1', maxFields: 50, maxKeys: 5 });
  t.ok('field' in (await a.fields.declare(field('email_domain', 'string', true))), 'A declares a field');
  t.ok('field' in (await b.fields.declare(field('email_domain', 'number'))), 'B declares one of the same name, its own');
  t.ok('field' in (await b.fields.declare(field('items', 'number'))));
  t.same(
    (await a.fields.all()).map((f) => [f.name, f.type, f.key]),
    [['email_domain', 'string', true]],
    'A reads its own field only',
  );
  t.equal(await a.fields.one('items'), undefined, "A cannot read B's field");
  t.equal(await a.fields.retire('items', at, 'u1'), undefined, 'nor retire it');
  t.same(await a.fields.audit('items'), [], 'nor read its audit');
  t.same((await policyOf(a)).fields, [{ name: 'email_domain', type: 'string', key: true, retired: false }], "a process loads A's fields for A");
  t.same((await policyOf(b)).fields.map((f) => f.name).sort(), ['email_domain', 'items']);
  await b.fields.retire('items', at, 'u1');
  t.same(
    (await policyOf(b)).fields.map((f) => f.name),
    ['email_domain'],
    'a retired field is not loaded',
  );
});
