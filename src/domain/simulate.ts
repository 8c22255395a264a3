// Transaction simulator: customers, merchants, cities and payment types over months, with the fraud
// scenarios the four model channels exist for. Seeded: the same options make the same rows, byte for
// byte. Output rows follow the dataset CSV format (GET /api/datasets/format) plus a `scenario`
// column for analysis. Each customer lives in a city, has a usual spend (log-normal), a daily
// rate, a handful of regular merchants and a preferred payment type. Each fraud scenario is aimed
// at one channel's signal: compromised_merchant and fraud_ring (graph), account_takeover
// (behavioral), card_testing (velocity), large_amount (tabular); each is described where it is
// simulated below, and in docs/simulator.md.

import type { Transaction } from './transaction.ts';
import { Rng } from './rng.ts';

export const PAYMENT_TYPES = ['card_present', 'card_not_present', 'wallet', 'bank_transfer'] as const;
export const CITIES = ['Lisbon', 'Porto', 'Madrid', 'Barcelona', 'Paris', 'Lyon', 'Berlin', 'Munich', 'Milan', 'Rome', 'Amsterdam', 'Vienna'] as const;
export const SCENARIOS = ['compromised_merchant', 'account_takeover', 'card_testing', 'fraud_ring', 'large_amount'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface SimulatedTransaction extends Transaction {
  transaction_id: string;
  label: 0 | 1;
  scenario: Scenario | '';
}

export interface SimulationOptions {
  seed: number;
  customers: number;
  merchants: number;
  days: number;
  /** First day, ISO date (UTC midnight). */
  start: string;
  /** Expected events per day of each scenario, per 1,000 customers (compromised merchants: per
   *  100 merchants), so the fraud rate does not depend on the population's size. Fraud
   *  transactions per event vary by scenario. Rings are not daily events but `rings` long-lived
   *  groups. */
  rates: Record<Exclude<Scenario, 'fraud_ring'>, number>;
  /** Rings alive at once (each: mules, colluding merchants, one channel). */
  rings: number;
}

export const DEFAULT_SIMULATION: SimulationOptions = {
  seed: 20260101,
  customers: 2000,
  merchants: 400,
  days: 90,
  start: '2026-01-01',
  rates: { compromised_merchant: 0.04, account_takeover: 0.6, card_testing: 0.4, large_amount: 0.5 },
  rings: 3,
};

interface Customer {
  id: string;
  city: string;
  spend: number;
  perDay: number;
  paymentType: string;
  regulars: number[];
}

interface Merchant {
  id: string;
  city: string;
  /** Typical ticket relative to a customer's usual spend. */
  ticket: number;
}

const DAY_MS = 86_400_000;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.below(items.length)]!;
}

function cents(x: number): number {
  return Math.round(x * 100) / 100;
}

export function simulate(options: Partial<SimulationOptions> = {}): SimulatedTransaction[] {
  const o: SimulationOptions = { ...DEFAULT_SIMULATION, ...options, rates: { ...DEFAULT_SIMULATION.rates, ...options.rates } };
  const rng = new Rng(o.seed);
  const start = Date.parse(`${o.start}T00:00:00Z`);
  if (!Number.isFinite(start)) throw new Error(`start ${o.start} is not an ISO date`);

  const merchants: Merchant[] = Array.from({ length: o.merchants }, (_, i) => ({
    id: `M${pad(i + 1, 5)}`,
    city: pick(rng, CITIES),
    ticket: Math.exp(rng.normal() * 0.5),
  }));
  const byCity = new Map<string, number[]>();
  merchants.forEach((m, i) => {
    byCity.set(m.city, [...(byCity.get(m.city) ?? []), i]);
  });
  const localMerchants = (city: string) => byCity.get(city) ?? [rng.below(merchants.length)];

  const customers: Customer[] = Array.from({ length: o.customers }, (_, i) => {
    const city = pick(rng, CITIES);
    const local = localMerchants(city);
    const regulars = Array.from({ length: 3 + rng.below(6) }, () => (rng.uniform() < 0.85 ? pick(rng, local) : rng.below(merchants.length)));
    const u = rng.uniform();
    return {
      id: `C${pad(i + 1, 6)}`,
      city,
      spend: Math.exp(3 + rng.normal() * 0.7),
      perDay: 0.3 + rng.uniform() * 2.2,
      paymentType: u < 0.55 ? 'card_present' : u < 0.8 ? 'card_not_present' : u < 0.93 ? 'wallet' : 'bank_transfer',
      regulars,
    };
  });

  const rows: SimulatedTransaction[] = [];
  const push = (t: Omit<SimulatedTransaction, 'transaction_id'>) => rows.push({ transaction_id: '', ...t });
  const timeOfDay = () => Math.min(DAY_MS - 1, Math.max(0, (13 + rng.normal() * 3.5) * 3_600_000));

  // Legitimate activity.
  for (let day = 0; day < o.days; day++) {
    const dayStart = start + day * DAY_MS;
    for (const c of customers) {
      const n = rng.poisson(c.perDay);
      for (let k = 0; k < n; k++) {
        const m = merchants[rng.uniform() < 0.8 ? pick(rng, c.regulars) : pick(rng, localMerchants(c.city))]!;
        const paymentType = rng.uniform() < 0.85 ? c.paymentType : pick(rng, PAYMENT_TYPES);
        push({
          time: dayStart + timeOfDay(),
          amount: cents(c.spend * m.ticket * Math.exp(rng.normal() * 0.45)),
          customer_id: c.id,
          merchant_id: m.id,
          location: paymentType === 'card_present' ? m.city : c.city,
          payment_type: paymentType,
          label: 0,
          scenario: '',
        });
      }
    }
  }

  // Compromised merchants: 14 days, a third of their payments in the window become fraud.
  const horizon = o.days * DAY_MS;
  for (let day = 0; day < o.days; day++) {
    for (let e = rng.poisson((o.rates.compromised_merchant * o.merchants) / 100); e > 0; e--) {
      const m = merchants[rng.below(merchants.length)]!;
      const from = start + day * DAY_MS;
      const to = Math.min(start + horizon, from + 14 * DAY_MS);
      for (const r of rows) {
        if (r.merchant_id === m.id && r.time >= from && r.time < to && r.label === 0 && rng.uniform() < 0.33) {
          r.label = 1;
          r.scenario = 'compromised_merchant';
          r.amount = cents(r.amount * (1 + rng.uniform()));
        }
      }
    }
  }

  const perCustomers = (rate: number) => (rate * o.customers) / 1000;
  for (let day = 0; day < o.days; day++) {
    const dayStart = start + day * DAY_MS;
    // Account takeover: a new channel (card not present, another city), amounts 3–8× usual, 1–2 days.
    for (let e = rng.poisson(perCustomers(o.rates.account_takeover)); e > 0; e--) {
      const c = customers[rng.below(customers.length)]!;
      const city = pick(
        rng,
        CITIES.filter((x) => x !== c.city),
      );
      const paymentType = c.paymentType === 'card_not_present' ? 'wallet' : 'card_not_present';
      const n = 2 + rng.below(5);
      for (let k = 0; k < n; k++) {
        push({
          time: dayStart + timeOfDay() + rng.below(2) * DAY_MS,
          amount: cents(c.spend * (3 + rng.uniform() * 5)),
          customer_id: c.id,
          merchant_id: merchants[rng.below(merchants.length)]!.id,
          location: city,
          payment_type: paymentType,
          label: 1,
          scenario: 'account_takeover',
        });
      }
    }
    // Card testing: 8–30 payments of 0.50–5.00 within ~10 minutes, card not present.
    for (let e = rng.poisson(perCustomers(o.rates.card_testing)); e > 0; e--) {
      const c = customers[rng.below(customers.length)]!;
      const t0 = dayStart + timeOfDay();
      const n = 8 + rng.below(23);
      for (let k = 0; k < n; k++) {
        push({
          time: t0 + rng.below(600_000),
          amount: cents(0.5 + rng.uniform() * 4.5),
          customer_id: c.id,
          merchant_id: merchants[rng.below(merchants.length)]!.id,
          location: c.city,
          payment_type: 'card_not_present',
          label: 1,
          scenario: 'card_testing',
        });
      }
    }
    // Plain out-of-pattern large amounts.
    for (let e = rng.poisson(perCustomers(o.rates.large_amount)); e > 0; e--) {
      const c = customers[rng.below(customers.length)]!;
      const m = merchants[pick(rng, c.regulars)]!;
      push({
        time: dayStart + timeOfDay(),
        amount: cents(Math.max(400, c.spend * (12 + rng.uniform() * 20))),
        customer_id: c.id,
        merchant_id: m.id,
        location: m.city,
        payment_type: c.paymentType,
        label: 1,
        scenario: 'large_amount',
      });
    }
  }

  // Fraud rings: mules (fresh customers) and colluding merchants through one channel, over weeks.
  for (let g = 0; g < o.rings; g++) {
    const city = pick(rng, CITIES);
    const paymentType = pick(rng, ['wallet', 'bank_transfer'] as const);
    const mules = Array.from({ length: 5 + rng.below(6) }, (_, i) => `R${g + 1}C${pad(i + 1, 3)}`);
    const colluders = Array.from({ length: 2 + rng.below(2) }, (_, i) => `R${g + 1}M${pad(i + 1, 2)}`);
    const first = rng.below(Math.max(1, o.days - 28));
    const last = Math.min(o.days, first + 21 + rng.below(21));
    for (let day = first; day < last; day++) {
      for (const mule of mules) {
        if (rng.uniform() < 0.35) {
          push({
            time: start + day * DAY_MS + timeOfDay(),
            amount: cents(150 + rng.uniform() * 850),
            customer_id: mule,
            merchant_id: pick(rng, colluders),
            location: city,
            payment_type: paymentType,
            label: 1,
            scenario: 'fraud_ring',
          });
        }
      }
    }
  }

  // Time order (ties by insertion order), then identifiers in that order.
  const order = rows.map((r, i) => [r.time, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const sorted = order.map(([, i]) => rows[i]!);
  sorted.forEach((r, i) => {
    r.transaction_id = `T${pad(i + 1, 8)}`;
  });
  return sorted;
}

export const CSV_COLUMNS = ['transaction_id', 'timestamp', 'amount', 'customer_id', 'merchant_id', 'location', 'payment_type', 'label', 'scenario'] as const;

/** The rows as CSV in the dataset format (plus `scenario`), timestamps in ISO 8601 UTC. */
export function toCsv(rows: SimulatedTransaction[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.transaction_id,
        new Date(r.time).toISOString(),
        r.amount.toFixed(2),
        r.customer_id,
        r.merchant_id,
        r.location,
        r.payment_type,
        r.label,
        r.scenario,
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}
