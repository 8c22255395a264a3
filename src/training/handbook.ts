// The fraud-detection handbook's simulator (Le Borgne et al., "Reproducible Machine Learning for
// Credit Card Fraud Detection"), re-implemented from its published description only (its code is
// GPL and was not read), for a side-by-side comparison with the handbook's published results.
// Description followed: 5,000 customers and 10,000 terminals over 183 days from 2018-04-01, placed
// uniformly on a 100×100 grid; a customer uses the terminals within radius 5. Each customer has a
// mean amount ~ U(5, 100) (standard deviation half of it) and a daily rate ~ U(0, 4); each day
// draws a Poisson number of transactions, at times ~ N(noon, 20,000 s) within the day (draws
// outside the day are dropped), at a uniformly chosen nearby terminal. A negative amount is redrawn
// uniformly in [0, 2·mean]. The three fraud scenarios (large amounts, compromised terminals,
// compromised customers) are applied in order, a later one overriding an earlier one's label, as
// in the description (published scale: ≈ 1.75 M transactions, 0.84 % fraud).

import { Rng } from '../domain/rng.ts';

export interface HandbookOptions {
  seed: number;
  customers: number;
  terminals: number;
  days: number;
  /** First day, ISO date (UTC midnight). */
  start: string;
  radius: number;
}

export const HANDBOOK_DEFAULTS: HandbookOptions = {
  seed: 0,
  customers: 5000,
  terminals: 10000,
  days: 183,
  start: '2018-04-01',
  radius: 5,
};

export interface HandbookTransaction {
  transaction_id: string;
  /** Epoch milliseconds (UTC). */
  time: number;
  /** Day index from the start (0-based). */
  day: number;
  amount: number;
  customer_id: string;
  terminal_id: string;
  label: 0 | 1;
  /** 0 legitimate, else the fraud scenario (1, 2 or 3) that labelled it. */
  scenario: 0 | 1 | 2 | 3;
}

const DAY_MS = 86_400_000;

export function simulateHandbook(options: Partial<HandbookOptions> = {}): HandbookTransaction[] {
  const o = { ...HANDBOOK_DEFAULTS, ...options };
  const rng = new Rng(o.seed);
  const start = Date.parse(`${o.start}T00:00:00Z`);
  if (!Number.isFinite(start)) throw new Error(`start ${o.start} is not an ISO date`);

  const customers = Array.from({ length: o.customers }, () => {
    const mean = 5 + rng.uniform() * 95;
    return { x: rng.uniform() * 100, y: rng.uniform() * 100, mean, std: mean / 2, perDay: rng.uniform() * 4 };
  });
  const terminals = Array.from({ length: o.terminals }, () => ({ x: rng.uniform() * 100, y: rng.uniform() * 100 }));
  const r2 = o.radius * o.radius;
  const nearby = customers.map((c) => {
    const list: number[] = [];
    for (let i = 0; i < terminals.length; i++) {
      const dx = terminals[i]!.x - c.x;
      const dy = terminals[i]!.y - c.y;
      if (dx * dx + dy * dy < r2) list.push(i);
    }
    return list;
  });

  interface Draft {
    time: number;
    day: number;
    amount: number;
    customer: number;
    terminal: number;
    scenario: 0 | 1 | 2 | 3;
  }
  const drafts: Draft[] = [];
  customers.forEach((c, ci) => {
    const near = nearby[ci]!;
    if (near.length === 0) return;
    for (let day = 0; day < o.days; day++) {
      const n = rng.poisson(c.perDay);
      for (let k = 0; k < n; k++) {
        const seconds = Math.round(86_400 / 2 + rng.normal() * 20_000);
        if (seconds < 0 || seconds >= 86_400) continue;
        let amount = c.mean + rng.normal() * c.std;
        if (amount < 0) amount = rng.uniform() * c.mean * 2;
        const terminal = near[rng.below(near.length)]!;
        drafts.push({ time: start + day * DAY_MS + seconds * 1000, day, amount: Math.round(amount * 100) / 100, customer: ci, terminal, scenario: 0 });
      }
    }
  });
  // Array.prototype.sort is stable, so equal times keep customer order: deterministic.
  drafts.sort((a, b) => a.time - b.time);

  // Scenario 1: large amounts.
  for (const r of drafts) if (r.amount > 220) r.scenario = 1;
  // Each terminal's and each customer's transactions, in time order.
  const byTerminal: Draft[][] = Array.from({ length: o.terminals }, () => []);
  const byCustomer: Draft[][] = Array.from({ length: o.customers }, () => []);
  for (const r of drafts) {
    byTerminal[r.terminal]!.push(r);
    byCustomer[r.customer]!.push(r);
  }
  // Scenario 2: compromised terminals (2 a day, 28 days): all their transactions.
  for (let day = 0; day < o.days; day++) {
    for (let k = 0; k < 2; k++) {
      for (const r of byTerminal[rng.below(o.terminals)]!) if (r.day >= day && r.day < day + 28) r.scenario = 2;
    }
  }
  // Scenario 3: compromised customers (3 a day, 14 days): a third of their transactions, ×5.
  for (let day = 0; day < o.days; day++) {
    for (let k = 0; k < 3; k++) {
      const theirs = byCustomer[rng.below(o.customers)]!.filter((r) => r.day >= day && r.day < day + 14);
      const take = Math.floor(theirs.length / 3);
      // A third of them, chosen without replacement (partial Fisher–Yates).
      for (let i = 0; i < take; i++) {
        const j = i + rng.below(theirs.length - i);
        [theirs[i], theirs[j]] = [theirs[j]!, theirs[i]!];
        const r = theirs[i]!;
        r.amount = Math.round(r.amount * 5 * 100) / 100;
        r.scenario = 3;
      }
    }
  }
  return drafts.map((r, i) => ({
    transaction_id: String(i),
    time: r.time,
    day: r.day,
    amount: r.amount,
    customer_id: `C${String(r.customer).padStart(5, '0')}`,
    terminal_id: `T${String(r.terminal).padStart(5, '0')}`,
    label: r.scenario === 0 ? 0 : 1,
    scenario: r.scenario,
  }));
}

/** The rows as CSV in the dataset format (terminals as merchants), plus the scenario. */
export function handbookCsv(rows: HandbookTransaction[]): string {
  const lines = ['transaction_id,timestamp,amount,customer_id,merchant_id,label,scenario'];
  for (const r of rows) {
    lines.push(`${r.transaction_id},${new Date(r.time).toISOString()},${r.amount.toFixed(2)},${r.customer_id},${r.terminal_id},${r.label},${r.scenario}`);
  }
  return `${lines.join('\n')}\n`;
}
