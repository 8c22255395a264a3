// The public sandbox: what `POST /api/risk/score` (guests, the dashboard's score form) scores
// against. It is the built-in example dataset (the service simulator's default run, the data the
// built-in model was trained on) at its own simulated times, scored as of one second after its
// newest transaction, so the same request always gets the same answer. It is built in memory at
// start (about 1.5 s), never written to, and holds no organization's data.

import { z } from 'zod';
import { History } from '../domain/history/history.ts';
import { detectRings } from '../domain/rings.ts';
import { RingIndex } from '../scoring/scorer.ts';
import { DEFAULT_SIMULATION, simulate, SCENARIOS } from '../domain/simulate.ts';

const Count = z.number().int().nonnegative();

/** What `GET /api/datasets/example` answers: the example's figures and how to make it. */
export const ExampleDataset = z.object({
  name: z.string(),
  description: z.string(),
  rows: Count,
  fraud_rows: Count,
  fraud_rate: z.number().min(0).max(1),
  columns: z.array(z.string()),
  customers: Count,
  merchants: Count,
  days: Count,
  seed: z.number().int(),
  scenarios: z.record(z.string(), Count).describe('Scenario → its fraud rows'),
  generate_with: z.string().describe('The command that writes the same file'),
  first_transaction_at: z.string().describe('The simulated period (ISO 8601)'),
  last_transaction_at: z.string(),
  sandbox_as_of: z.string().describe('The moment sandbox scores are made at (ISO 8601)'),
});
export type ExampleDataset = z.infer<typeof ExampleDataset>;

export interface Sandbox {
  history: History;
  /** Its flagged rings (`ringIndex.rings`), looked up by merchant and channel. */
  ringIndex: RingIndex;
  /** When sandbox scores are made (epoch ms). */
  asOf: number;
  example: ExampleDataset;
}

/** How long after the example's newest transaction the sandbox scores. */
const AFTER_NEWEST_MS = 1000;

export function buildSandbox(labelDelay: number): Sandbox {
  const rows = simulate();
  const history = new History(labelDelay).withRecords(rows.length);
  for (const r of rows) history.add(r);
  const asOf = history.newest + AFTER_NEWEST_MS;
  const fraud = rows.filter((r) => r.label === 1).length;
  const example: ExampleDataset = {
    name: 'built-in example (service simulator)',
    description:
      'Simulated card payments of customers at merchants across twelve cities and four payment types, with five fraud scenarios (compromised merchants, account takeover, card testing, fraud rings, out-of-pattern large amounts). The built-in model was trained on it; it is the public sandbox that POST /api/risk/score scores against, and a test organization can import it as its history.',
    rows: rows.length,
    fraud_rows: fraud,
    fraud_rate: fraud / rows.length,
    columns: ['transaction_id', 'timestamp', 'amount', 'customer_id', 'merchant_id', 'location', 'payment_type', 'label', 'scenario'],
    customers: DEFAULT_SIMULATION.customers,
    merchants: DEFAULT_SIMULATION.merchants,
    days: DEFAULT_SIMULATION.days,
    seed: DEFAULT_SIMULATION.seed,
    scenarios: Object.fromEntries(SCENARIOS.map((s) => [s, rows.filter((r) => r.scenario === s).length])),
    generate_with: 'npm run simulate -- --out example.csv',
    first_transaction_at: new Date(rows[0]!.time).toISOString(),
    last_transaction_at: new Date(history.newest).toISOString(),
    sandbox_as_of: new Date(asOf).toISOString(),
  };
  return { history, ringIndex: new RingIndex(detectRings(history.transactions, asOf, { labelDelay })), asOf, example };
}
