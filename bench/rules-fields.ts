// bench:rules, fields part: the v1 route's throughput when an organization declares its own fields
// and every request carries them, against the same route without (the goal: at least 90 % of it).
// One real server (the compiled `dist/`, as `npm start` starts it: embedded database, built-in
// model, DURABILITY=commit), three organizations made through the API as a customer makes them:
// - `fields`: 10 declared fields (5 strings, 3 numbers, 2 booleans), 3 of the strings keys with the
//   cardinalities of bench/field-values.ts (a device hash, about one per customer, some shared; an
//   e-mail domain of 40, a few very common; a card's BIN country of 30), all 10 sent on every
//   request, and 20 active rules reading them:
//   comparisons of `fields.<name>`, `in_list` over a field (a 1,000-value text list), `has()`, a
//   literal list, and `field_history.<key>` (counts over an hour to a week, amounts, distinct
//   customers) of all three keys;
// - `none`, the baseline the goal names ("its throughput without fields"): no field declared or
//   sent, no rule;
// - `rules`: the 20 ordinary rules and 100,000-value block list of the HTTP part, no fields: what
//   fields cost beside what 20 rules cost anyway.
// The same load (rules-http.ts's slices: 8 connections, the same customers, merchants and amounts,
// every request a new recorded transaction) runs on each in turn, the order rotated every round, so
// drift, neighbours and the growing histories hit all three alike; a ratio is the median of the
// rounds' ratios, beside the ratio of all requests answered and of the server's CPU per request.

import { createHash } from 'node:crypto';
import { SignIn } from '../test/support/processes.ts';
import { startServer, stopServer } from './server-process.ts';
import { freshDatabase } from '../test/support/server.ts';
import { scoreRequests } from './requests.ts';
import { call, median, round3, sideFigures, slices, totalRate, withBlockListRules, type Side, type Slice } from './rules-http.ts';
import type { BenchRule } from './rule-set.ts';
import { COUNTRIES, DOMAINS, SHARED_DEVICE_EVERY } from './field-values.ts';

/** The declared fields: three keys first. */
export const FIELDS = [
  { name: 'device_hash', type: 'string', key: true, description: 'Hash of the device fingerprint' },
  { name: 'email_domain', type: 'string', key: true, description: "The buyer's e-mail domain" },
  { name: 'bin_country', type: 'string', key: true, description: "The card's issuing country (from its BIN)" },
  { name: 'shipping_country', type: 'string', key: false, description: null },
  { name: 'shipping_method', type: 'string', key: false, description: null },
  { name: 'basket_items', type: 'number', key: false, description: null },
  { name: 'account_age_days', type: 'number', key: false, description: null },
  { name: 'session_seconds', type: 'number', key: false, description: null },
  { name: 'three_ds_passed', type: 'boolean', key: false, description: null },
  { name: 'is_gift', type: 'boolean', key: false, description: null },
] as const;

const THROWAWAY = 'throwaway_email_domains';

/** A uniform number in [0, 1) from a string: the same every run. */
function uniform(s: string): number {
  return createHash('sha256').update(s).digest().readUInt32BE(0) / 2 ** 32;
}

/** One of `values`, rank r with weight 1 / (r + 1)^1.2. */
function zipf<T>(values: readonly T[], u: number): T {
  const w = values.map((_, r) => 1 / (r + 1) ** 1.2);
  let x = u * w.reduce((a, b) => a + b, 0);
  for (let r = 0; r < values.length; r++) if ((x -= w[r]!) < 0) return values[r]!;
  return values[values.length - 1]!;
}

/** Variants of a customer's fields: its successive payments cycle through them. */
const VARIANTS = 8;

/**
 * Every request's `fields` as JSON text, by customer (0 to 1,999, bench/requests.ts) and variant,
 * made once: a customer's device (bench/field-values.ts: a twenty-fifth of customers share their
 * neighbour's, a third use a second one in two variants of eight), its e-mail domain and card
 * country; the shipping country, another than the card's in one variant of eight; the rest varying
 * with the variant.
 */
export function fieldsOfRequests(customers = 2000): (customer: number, k: number) => string {
  const device = (owner: number, slot: number) => createHash('sha256').update(`device:${owner}:${slot}`).digest('hex').slice(0, 32);
  const table: string[][] = [];
  for (let c = 0; c < customers; c++) {
    const owner = c % SHARED_DEVICE_EVERY === SHARED_DEVICE_EVERY - 1 ? c - 1 : c;
    const domain = zipf(DOMAINS, uniform(`domain:${c}`));
    const country = zipf(COUNTRIES, uniform(`country:${c}`));
    const ageDays = Math.floor(uniform(`age:${c}`) * 3000);
    table.push(
      Array.from({ length: VARIANTS }, (_, v) =>
        JSON.stringify({
          device_hash: device(owner, c % 3 === 0 && v >= VARIANTS - 2 ? 1 : 0),
          email_domain: domain,
          bin_country: country,
          shipping_country: v === 3 ? COUNTRIES[(COUNTRIES.indexOf(country) + 1 + c) % COUNTRIES.length] : country,
          shipping_method: ['standard', 'standard', 'express', 'pickup'][(c + v) % 4],
          basket_items: 1 + ((c + 7 * v) % 12),
          account_age_days: ageDays,
          session_seconds: 3 + ((13 * c + 29 * v) % 600),
          three_ds_passed: (c + v) % 5 !== 0,
          is_gift: (7 * c + v) % 10 === 0,
        }),
      ),
    );
  }
  // k walks the customers once every `customers` requests (requests.ts): the variant moves on each
  // time round.
  return (customer, k) => table[customer]![Math.floor(k / customers) % VARIANTS]!;
}

/** The 20 rules over the fields, as an organization would write them. */
export function fieldRules(): BenchRule[] {
  const n = (k: number) => `f${String(k).padStart(3, '0')}`;
  return [
    { name: `${n(1)} large basket without 3-D Secure`, expression: 'fields.basket_items >= 10.0 && !fields.three_ds_passed', action: 'review' },
    { name: `${n(2)} throwaway e-mail`, expression: `in_list("${THROWAWAY}", fields.email_domain)`, action: 'block' },
    {
      name: `${n(3)} card from elsewhere`,
      expression: 'has(fields.bin_country) && fields.bin_country != fields.shipping_country && amount > 200.0',
      action: 'review',
    },
    { name: `${n(4)} device of many customers today`, expression: 'field_history.device_hash.distinct_customers_24h > 3', action: 'review' },
    {
      name: `${n(5)} device burst`,
      expression: 'field_history.device_hash.count_1h >= 5 || field_history.device_hash.amount_24h > 10000.0',
      action: 'review',
    },
    { name: `${n(6)} new e-mail domain, large`, expression: 'field_history.email_domain.is_new && amount > 500.0', action: 'review' },
    { name: `${n(7)} rare card country, large`, expression: 'field_history.bin_country.distinct_customers_24h < 3 && amount > 250.0', action: 'review' },
    { name: `${n(8)} new account, large`, expression: 'fields.account_age_days < 2.0 && amount > 300.0', action: 'review' },
    { name: `${n(9)} express gift`, expression: 'fields.shipping_method == "express" && fields.is_gift && amount > 250.0', action: 'review' },
    { name: `${n(10)} scripted session`, expression: 'fields.session_seconds < 5.0 && fields.basket_items > 3.0', action: 'review' },
    { name: `${n(11)} old account, new device`, expression: 'field_history.device_hash.is_new && fields.account_age_days > 365.0', action: 'review' },
    { name: `${n(12)} shared device, month`, expression: 'field_history.device_hash.distinct_customers_30d >= 3 && amount > 100.0', action: 'review' },
    { name: `${n(13)} shipping to a watched country`, expression: 'fields.shipping_country in ["NG", "RU", "KP", "IR", "BY"]', action: 'block' },
    { name: `${n(14)} e-mail domain flood`, expression: 'field_history.email_domain.count_1h > 5000', action: 'review' },
    { name: `${n(15)} busy device, risky`, expression: 'field_history.device_hash.count_24h > 40 && risk_score > 0.2', action: 'review' },
    { name: `${n(16)} watched e-mail domains`, expression: 'fields.email_domain.endsWith(".ru") && amount > 150.0', action: 'review' },
    {
      name: `${n(17)} first payment of a device, big basket`,
      expression: 'field_history.device_hash.prior_transactions == 0 && fields.basket_items > 5.0',
      action: 'review',
    },
    {
      name: `${n(18)} card country's spend`,
      expression: 'field_history.bin_country.amount_24h > 5000000.0 && fields.bin_country != "PT"',
      action: 'review',
    },
    { name: `${n(19)} device of the week, no 3-D Secure`, expression: 'field_history.device_hash.count_7d > 200 && !fields.three_ds_passed', action: 'review' },
    {
      name: `${n(20)} known device, old account, small`,
      expression: 'fields.three_ds_passed && fields.account_age_days > 730.0 && amount < 50.0 && field_history.device_hash.prior_transactions > 20',
      action: 'allow',
    },
  ];
}

export interface FieldsFigures {
  seconds_per_slice: number;
  rounds: number;
  /** No fields, no rules: the baseline. */
  none: Side;
  /** The 20 ordinary rules and the block list, no fields. */
  rules_20: Side;
  /** 10 fields on every request, 3 keys, 20 rules reading them. */
  fields_10: Side & { matched_share: number; request_bytes_added: number };
  /** Median of the rounds' ratios, with fields / without (the goal: at least 0.9). */
  ratio: number;
  ratio_of_totals: number;
  round_ratios: number[];
  /** Server CPU per request, without / with. */
  cpu_ratio: number;
  /** With fields against the 20 ordinary rules: what fields cost beyond rules. */
  ratio_to_rules: number;
  cpu_ratio_to_rules: number;
  /** The 20 ordinary rules against none (the HTTP part's figure, measured again here). */
  rules_ratio: number;
}

export async function measureFields(o: { quick: boolean; log: (line: string) => void; databaseUrl?: string | undefined }): Promise<FieldsFigures> {
  const seconds = 2;
  const rounds = o.quick ? 3 : 16;
  const signIn = await SignIn.start();
  // With a PostgreSQL server: a database of this run's own, dropped at the end. The database's
  // work is then its own processes' (on the same cores), not a thread of the server's.
  const pg = o.databaseUrl ? await freshDatabase(o.databaseUrl) : undefined;
  const { child: server, url: base } = await startServer({ SCORE_RATE_PER_MINUTE: '100000000', ...signIn.env, ...(pg ? { DATABASE_URL: pg.url } : {}) });
  try {
    const fielded = await signIn.organization(base, 'fields');
    const ruled = await signIn.organization(base, 'rules');
    const none = await signIn.organization(base, 'none');
    const org = `${base}/api/organizations/${fielded.id}`;
    for (const f of FIELDS) await call(`${org}/fields`, 'POST', fielded.member, { ...f, description: f.description ?? undefined }, 201);
    await call(`${org}/lists`, 'POST', fielded.member, { name: THROWAWAY, kind: 'text', description: 'Disposable e-mail domains' }, 201);
    const throwaway = ['mailinator.com', 'guerrillamail.com', ...Array.from({ length: 998 }, (_, i) => `disposable-${i}.example`)];
    await call(`${org}/lists/${THROWAWAY}/items`, 'POST', fielded.member, { values: throwaway, reason: 'disposable' }, 200);
    for (const r of fieldRules()) await call(`${org}/rules`, 'POST', fielded.member, { ...r, status: 'active' }, 201);
    await withBlockListRules(`${base}/api/organizations/${ruled.id}`, ruled.member);

    const withFields = scoreRequests('bench', fieldsOfRequests());
    const plain = scoreRequests();
    const added = withFields.body().length - plain.body().length;
    let matched = 0;
    let answered = 0;
    const run = await slices(
      server,
      base,
      [
        {
          key: fielded.secret,
          body: withFields.newTransaction,
          noted: (body) => {
            answered++;
            if (body.includes('"rules":[{')) matched++;
          },
        },
        { key: none.secret, body: scoreRequests().newTransaction },
        { key: ruled.secret, body: scoreRequests().newTransaction },
      ],
      rounds,
      seconds,
    );
    const [f, n, r] = run.slices as [Slice[], Slice[], Slice[]];
    const roundRatios = f.map((s, i) => round3(s.rps / n[i]!.rps));
    o.log(`rounds (fields / none): ${roundRatios.join(' ')}`);
    const sides = {
      fields: sideFigures(f, run.latency[0]!, seconds),
      none: sideFigures(n, run.latency[1]!, seconds),
      rules: sideFigures(r, run.latency[2]!, seconds),
    };
    const figures: FieldsFigures = {
      seconds_per_slice: seconds,
      rounds,
      none: sides.none,
      rules_20: sides.rules,
      fields_10: { ...sides.fields, matched_share: round3(matched / Math.max(1, answered)), request_bytes_added: added },
      ratio: median(roundRatios),
      ratio_of_totals: round3(totalRate(f, seconds) / totalRate(n, seconds)),
      round_ratios: roundRatios,
      cpu_ratio: round3(sides.none.server_cpu_us_per_request / sides.fields.server_cpu_us_per_request),
      ratio_to_rules: median(f.map((s, i) => round3(s.rps / r[i]!.rps))),
      cpu_ratio_to_rules: round3(sides.rules.server_cpu_us_per_request / sides.fields.server_cpu_us_per_request),
      rules_ratio: median(r.map((s, i) => round3(s.rps / n[i]!.rps))),
    };
    o.log(
      `fields ${sides.fields.rps} req/s (server CPU ${sides.fields.server_cpu_us_per_request} µs a request), none ${sides.none.rps} (${sides.none.server_cpu_us_per_request} µs), 20 ordinary rules ${sides.rules.rps} (${sides.rules.server_cpu_us_per_request} µs): fields / none ${figures.ratio} (median of rounds), ${figures.ratio_of_totals} (totals), CPU ${figures.cpu_ratio}`,
    );
    return figures;
  } finally {
    await stopServer(server);
    await signIn.close();
    await pg?.drop();
  }
}
