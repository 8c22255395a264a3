// Velocity over a key field's values, end to end on each storage back end, the server's clock
// stepped through six weeks of payments (bursts minutes apart, days between some): every answer's
// `field_history` for the device it carried equals a recount of the stored rows strictly before its
// time (earlier transactions, counts over 1 h, 24 h and 7 days, the amount over 24 h, distinct
// customers over 24 h and 30 days), before and after a restart that loads the history from the
// rows; a rule on `field_history` decides on those very numbers and backtests over them; a field
// that is not a key has no history (422); the same device value in another organization is that
// organization's own, new there.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type LiveService, type Organization } from '../support/accounts.ts';
import { Rng } from '../../src/domain/rng.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sent {
  id: string;
  time: number;
  customer: string;
  device: string;
  amount: number;
}

/** The figures counted from what was sent, strictly before `at`. */
function recount(sent: readonly Sent[], device: string, at: number) {
  const mine = sent.filter((s) => s.device === device && s.time < at);
  const since = (ms: number) => mine.filter((s) => s.time >= at - ms);
  return {
    prior_transactions: mine.length,
    is_new: mine.length === 0,
    count_1h: since(HOUR).length,
    count_24h: since(DAY).length,
    count_7d: since(7 * DAY).length,
    amount_24h: Math.round(since(DAY).reduce((a, s) => a + s.amount, 0) * 100) / 100,
    distinct_customers_24h: new Set(since(DAY).map((s) => s.customer)).size,
    distinct_customers_30d: new Set(since(30 * DAY).map((s) => s.customer)).size,
  };
}

for (const backend of backends()) {
  t.test(`velocity over a key field on ${backend.name}`, async (t) => {
    let now = Date.parse('2026-09-01T00:00:00Z');
    const holder = await liveFor(t, backend, {}, undefined, () => now);
    let live: LiveService = holder.live;
    const owner = (org: Organization, method: 'GET' | 'POST' | 'DELETE', path: string, payload?: unknown) =>
      live.s.app.inject({
        method,
        url: `/api/organizations/${org.id}${path}`,
        headers: org.owner.headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');
    for (const f of [
      { name: 'device_hash', type: 'string', key: true },
      { name: 'email_domain', type: 'string' },
    ])
      t.equal((await owner(shop, 'POST', '/fields', f)).statusCode, 201);
    t.equal((await owner(other, 'POST', '/fields', { name: 'device_hash', type: 'string', key: true })).statusCode, 201);

    const notKey = await owner(shop, 'POST', '/rules', {
      name: 'x',
      expression: 'field_history.email_domain.count_1h > 1',
      action: 'review',
      status: 'active',
    });
    t.equal(notKey.statusCode, 422, 'a field that is not a key has no history');
    t.match(notKey.json().detail.errors[0].message, /not a key field/);
    const rule = await owner(shop, 'POST', '/rules', {
      name: 'shared device',
      expression: 'field_history.device_hash.distinct_customers_24h >= 2 && field_history.device_hash.count_1h >= 1',
      action: 'review',
      status: 'active',
    });
    t.equal(rule.statusCode, 201, rule.body);

    const rng = new Rng(7);
    const devices = ['dev-a', 'dev-b', 'dev-c'];
    const sent: Sent[] = [];
    const problems: string[] = [];
    let matchedByRule = 0;
    const score = async (s: Sent) => {
      now = s.time;
      const res = await live.scoreLoaded(shop, {
        transaction_id: s.id,
        amount: s.amount,
        customer_id: s.customer,
        merchant_id: 'm-1',
        fields: { device_hash: s.device, email_domain: 'example.com' },
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      const body = res.json();
      const want = recount(sent, s.device, s.time);
      const got = { ...body.field_history.device_hash, amount_24h: Math.round(body.field_history.device_hash.amount_24h * 100) / 100 };
      if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${s.id}: answered ${JSON.stringify(got)}, recount ${JSON.stringify(want)}`);
      const ruled = (body.rules ?? []).some((m: { name: string }) => m.name === 'shared device');
      if (ruled !== (want.distinct_customers_24h >= 2 && want.count_1h >= 1)) problems.push(`${s.id}: the rule ${ruled ? 'matched' : 'did not match'}`);
      if (ruled) matchedByRule++;
      sent.push(s);
    };

    let time = now;
    for (let i = 0; i < 140; i++) {
      const r = rng.uniform();
      time += r < 0.5 ? rng.below(10 * MINUTE) + 1 : r < 0.85 ? rng.below(6 * HOUR) : rng.below(5 * DAY);
      // A few customers per device, now and then another customer's device.
      const device = devices[rng.below(devices.length)]!;
      const customer = `c-${device}-${rng.below(rng.uniform() < 0.8 ? 2 : 6)}`;
      await score({ id: `p-${i}`, time, customer, device, amount: Math.round(rng.uniform() * 20_000) / 100 });
      if (i === 90) {
        // A restart: the next process loads the history from the stored rows.
        live = await holder.restart();
      }
    }
    t.ok(sent[sent.length - 1]!.time - sent[0]!.time > 35 * DAY, 'over more than the 30-day window');
    t.same(problems.slice(0, 5), [], 'every answer as the recount, and the rule on those numbers');
    t.ok(matchedByRule > 5, `the rule matched ${matchedByRule} times`);

    const elsewhere = (
      await live.score(other, { transaction_id: 'o-1', amount: 5, customer_id: 'c-1', merchant_id: 'm', fields: { device_hash: 'dev-a' } })
    ).json();
    t.match(elsewhere.field_history.device_hash, { prior_transactions: 0, is_new: true }, "another organization's dev-a is its own");
    // Read back with the key (the owners' sessions ended weeks ago on this clock).
    const stored = async (org: Organization, id: string) =>
      (await live.s.app.inject({ url: `/api/v1/transactions/${id}`, headers: { authorization: `Bearer ${org.key}` } })).json();
    const record = await stored(other, 'o-1');
    t.same(record.evidence.field_history, elsewhere.field_history, 'the record keeps the histories its answer showed');
    const without = (await live.score(shop, { transaction_id: 'no-device', amount: 5, customer_id: 'c-1', merchant_id: 'm' })).json();
    t.equal(without.field_history, undefined, 'a payment without key values answers none');
    t.notOk('field_history' in (await stored(shop, 'no-device')).evidence, 'and its record has none');

    // Six weeks on, the owner's session has ended: signed in again.
    shop.owner = await live.signIn('owner-of-Shop');
    const queued = await owner(shop, 'POST', '/rules/backtests', { rule_id: rule.json().id });
    t.equal(queued.statusCode, 202, queued.body.slice(0, 300));
    const job = queued.json();
    let done = job;
    for (let k = 0; k < 400 && done.status !== 'succeeded' && done.status !== 'failed'; k++) {
      await sleep(25);
      done = (await live.s.app.inject({ url: `/api/jobs/${job.id}`, headers: shop.owner.headers })).json();
    }
    t.equal(done.status, 'succeeded', JSON.stringify(done).slice(0, 500));
    t.equal(done.summary.matched, matchedByRule, 'a backtest reads the histories the decisions saw');
    t.equal(done.summary.without_fields, 1, 'and the payment without the device is not matched');
    t.equal(done.summary.errors, 0);
  });
}
