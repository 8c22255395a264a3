// Where the service's history comes from, and where scored transactions go. At first start (an
// empty database) the built-in example dataset (the service simulator's default run, the same data
// the built-in model was trained on) is stored, shifted so its newest transaction is now
// (CONTRACT.md). Every start then reads the stored transactions back, in time order, into the
// in-memory history the scorer reads. Scored transactions are written behind, in batches, by
// `ScoredWriter`: the response never waits for the database, and `close()` flushes what is pending,
// so a restart loses nothing (a crash can lose at most the last flush interval, 25 ms by default).

import { History, type HistoryTransaction } from '../engine/history.ts';
import { DEFAULT_SIMULATION, simulate, SCENARIOS } from '../training/simulate.ts';
import type { Db } from '../storage/db.ts';
import { countTransactions, forEachTransactionPage, getMeta, insertTransactions, setMeta, type StoredTransaction } from '../storage/history-store.ts';

export interface ExampleDataset {
  name: string;
  description: string;
  rows: number;
  fraud_rows: number;
  fraud_rate: number;
  columns: string[];
  customers: number;
  merchants: number;
  days: number;
  seed: number;
  scenarios: Record<string, number>;
  generate_with: string;
  /** When the service stored it as its history, and by how much its times were shifted. */
  seeded_at: string;
  shifted_by_ms: number;
}

/** The example dataset's rows (deterministic) and its description. */
export function exampleDataset(): { rows: ReturnType<typeof simulate>; info: Omit<ExampleDataset, 'seeded_at' | 'shifted_by_ms'> } {
  const rows = simulate();
  const fraud = rows.filter((r) => r.label === 1).length;
  const scenarios = Object.fromEntries(SCENARIOS.map((s) => [s, rows.filter((r) => r.scenario === s).length]));
  return {
    rows,
    info: {
      name: 'built-in example (service simulator)',
      description:
        'Simulated card payments of customers at merchants across twelve cities and four payment types, with five fraud scenarios (compromised merchants, account takeover, card testing, fraud rings, out-of-pattern large amounts). The built-in model was trained on it, and the service starts with it as its history.',
      rows: rows.length,
      fraud_rows: fraud,
      fraud_rate: fraud / rows.length,
      columns: ['transaction_id', 'timestamp', 'amount', 'customer_id', 'merchant_id', 'location', 'payment_type', 'label', 'scenario'],
      customers: DEFAULT_SIMULATION.customers,
      merchants: DEFAULT_SIMULATION.merchants,
      days: DEFAULT_SIMULATION.days,
      seed: DEFAULT_SIMULATION.seed,
      scenarios,
      generate_with: 'npm run simulate -- --out example.csv',
    },
  };
}

/** Stores the example dataset as the history if the database holds none; returns when it was. */
export async function ensureHistory(db: Db, now: number, log: (msg: string) => void = () => {}): Promise<ExampleDataset> {
  const existing = await getMeta<ExampleDataset>(db, 'example_dataset');
  if (existing) return existing;
  const { rows, info } = exampleDataset();
  const shift = now - rows[rows.length - 1]!.time;
  if ((await countTransactions(db)) > 0) {
    // Stored earlier without its description (interrupted first start): describe, do not re-insert.
    const example: ExampleDataset = { ...info, seeded_at: new Date(now).toISOString(), shifted_by_ms: shift };
    await setMeta(db, 'example_dataset', example);
    return example;
  }
  log(`first start: storing the example dataset (${rows.length} transactions) as the history`);
  const stored: StoredTransaction[] = rows.map((r) => ({
    transaction_id: r.transaction_id,
    time: r.time + shift,
    amount: r.amount,
    customer_id: r.customer_id,
    merchant_id: r.merchant_id,
    location: r.location,
    payment_type: r.payment_type,
    label: r.label ?? null,
    source: 'example',
  }));
  await insertTransactions(db, stored);
  const example: ExampleDataset = { ...info, seeded_at: new Date(now).toISOString(), shifted_by_ms: shift };
  await setMeta(db, 'example_dataset', example);
  return example;
}

/** Every stored transaction, in time order (time, then insertion), in a history the scorer reads;
 *  read a page at a time straight into the history's columns. */
export async function loadHistory(db: Db, labelDelay: number): Promise<History> {
  const history = new History(labelDelay).withRecords(await countTransactions(db));
  await forEachTransactionPage(db, (page) => {
    for (const s of page) {
      history.add({
        time: s.time,
        amount: s.amount,
        customer_id: s.customer_id,
        merchant_id: s.merchant_id,
        location: s.location,
        payment_type: s.payment_type,
        transaction_id: s.transaction_id,
        ...(s.label === null ? {} : { label: s.label }),
      });
    }
  });
  return history;
}

/** Write-behind persistence of scored transactions, in batches. */
export class ScoredWriter {
  private pending: StoredTransaction[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  failures = 0;

  constructor(
    private readonly db: Db,
    private readonly intervalMs = 25,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  push(tx: HistoryTransaction & { transaction_id: string }): void {
    this.pending.push({
      transaction_id: tx.transaction_id,
      time: tx.time,
      amount: tx.amount,
      customer_id: tx.customer_id,
      merchant_id: tx.merchant_id,
      location: tx.location,
      payment_type: tx.payment_type,
      label: null,
      source: 'scored',
    });
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** Writes everything pending; resolves when it is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        await insertTransactions(this.db, batch);
      } catch (e) {
        // Keep them for the next flush rather than lose them.
        this.failures++;
        this.pending.unshift(...batch);
        this.onError(e);
      }
    });
    return this.flushing;
  }

  get size(): number {
    return this.pending.length;
  }
}
