// The rules bench:rules evaluates: realistic expressions of the kinds operators write (a customer
// block list of 100,000 values, amount and hour thresholds, channel scores, new customers and
// channels, features, prefixes, a literal list, a comprehension), as an organization would save
// them. The same definitions are loaded in-process into a Policy and created through the API on a
// real server, so both measurements evaluate the same rules. Each block of twenty repeats the
// same shapes with other constants, as a larger rule set does; every rule is active.

import type { RuleAction } from '../src/domain/rules/expression.ts';

/** The block list's name, and how many values it holds. */
export const BLOCK_LIST = 'blocked_customers';
export const BLOCK_LIST_SIZE = 100_000;

export interface BenchRule {
  name: string;
  expression: string;
  action: RuleAction;
}

const ELSEWHERE = [
  ['Lagos', 'Minsk', 'Caracas', 'Manila', 'Karachi', 'Dhaka'],
  ['Kyiv', 'Bogota', 'Lima', 'Nairobi', 'Accra', 'Hanoi'],
  ['Tunis', 'Quito', 'Cairo', 'Almaty', 'Tbilisi', 'Baku'],
  ['Sofia', 'Riga', 'Vilnius', 'Tallinn', 'Zagreb', 'Skopje'],
  ['Belgrade', 'Tirana', 'Yerevan', 'Chisinau', 'Sarajevo', 'Podgorica'],
];
const CITIES = ['Madrid', 'Paris', 'Berlin', 'Lisbon', 'Rome'];

/** The g-th twenty rules (0-based): the same shapes, other constants. */
function twenty(g: number): BenchRule[] {
  const n = (k: number) => `r${String(g * 20 + k).padStart(3, '0')}`;
  return [
    { name: `${n(1)} blocked customer`, expression: `in_list("${BLOCK_LIST}", customer_id)`, action: 'block' },
    { name: `${n(2)} large amount`, expression: `amount > ${2000 + 500 * g}.0`, action: 'review' },
    { name: `${n(3)} large at night`, expression: `hour >= ${1 + (g % 3)} && hour <= 5 && amount > 300.0`, action: 'review' },
    { name: `${n(4)} velocity channel`, expression: `channel_scores.velocity > ${(0.85 + 0.02 * g).toFixed(2)}`, action: 'review' },
    { name: `${n(5)} new customer, large`, expression: `customer.is_new && amount > ${250 + 50 * g}.0`, action: 'review' },
    { name: `${n(6)} burst in the hour`, expression: `features["customer_count_1h"] >= ${5 + g}.0`, action: 'review' },
    {
      name: `${n(7)} far above the customer's mean`,
      expression: `features["amount_to_customer_mean"] > ${4 + g}.0 && features["customer_prior_count"] >= 5.0`,
      action: 'review',
    },
    { name: `${n(8)} merchant range`, expression: `merchant_id.startsWith("M0039${g}")`, action: 'review' },
    { name: `${n(9)} location outside the region`, expression: `location in ${JSON.stringify(ELSEWHERE[g])}`, action: 'block' },
    { name: `${n(10)} watched merchant prefixes`, expression: `["M001${g}", "M007${g}", "M013${g}"].exists(p, merchant_id.startsWith(p))`, action: 'review' },
    {
      name: `${n(11)} card not present, risky`,
      expression: `payment_type == "card_not_present" && risk_score > ${(0.3 + 0.05 * g).toFixed(2)}`,
      action: 'review',
    },
    { name: `${n(12)} critical band`, expression: `risk_band == "critical" && amount > ${100 + 50 * g}.0`, action: 'block' },
    { name: `${n(13)} weekday night`, expression: `weekday == ${g} && hour < 6 && amount > 800.0`, action: 'review' },
    { name: `${n(14)} young merchant, large`, expression: `merchant.prior_transactions < ${3 + g} && amount > 500.0`, action: 'review' },
    { name: `${n(15)} new channel, risky`, expression: `channel_history.is_new && risk_score > ${(0.2 + 0.05 * g).toFixed(2)}`, action: 'review' },
    { name: `${n(16)} one channel, large`, expression: `channel == "card_not_present:${CITIES[g]}" && amount > 1500.0`, action: 'review' },
    { name: `${n(17)} merchant with recent fraud`, expression: `features["merchant_recent_fraud_rate_7d"] > ${(0.3 + 0.1 * g).toFixed(1)}`, action: 'block' },
    { name: `${n(18)} regular customer, very large`, expression: `customer.prior_transactions > 50 && amount > ${3000 + 1000 * g}.0`, action: 'review' },
    { name: `${n(19)} cold start, large`, expression: `path == "COLD_START" && amount > ${200 + 100 * g}.0`, action: 'review' },
    { name: `${n(20)} small and safe`, expression: `risk_score < 0.01 && amount < ${20 + 5 * g}.0 && customer.prior_transactions > 20`, action: 'allow' },
  ];
}

/** `count` rules (a multiple of 20, at most 100). */
export function benchRules(count: number): BenchRule[] {
  if (count % 20 !== 0 || count > 100) throw new Error(`benchRules: ${count} is not a multiple of 20 up to 100`);
  return Array.from({ length: count / 20 }, (_, g) => twenty(g)).flat();
}

/** The block list's values: every 50th customer of the example history (40 of its 2,000, so a
 *  few requests match) and 99,960 customers it does not have. */
export function blockListValues(): string[] {
  const values: string[] = [];
  for (let i = 50; i <= 2000; i += 50) values.push(`C${String(i).padStart(6, '0')}`);
  for (let i = 0; values.length < BLOCK_LIST_SIZE; i++) values.push(`C9${String(i).padStart(7, '0')}`);
  return values;
}
