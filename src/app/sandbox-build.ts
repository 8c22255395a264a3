// What the public sandbox is made of, and how it is made: the example's figures (from the simulated
// rows), and its history and rings, either read from the build kept under DATA_DIR for the same
// settings and code or built from the simulated rows and kept. sandbox.ts runs the build on a
// thread of its own (sandbox-build-worker.ts): simulating a quarter of a million rows, building
// their history and finding their rings is seconds of CPU that must not hold the event loop.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ExampleDataset } from '../contract/datasets.ts';
import { codeDigest } from '../domain/code-digest.ts';
import { History } from '../domain/history/history.ts';
import { HISTORY_FORMAT, historyBytes, historyFromBytes } from '../domain/history/snapshot.ts';
import { detectRings, type Ring } from '../domain/rings.ts';
import { DEFAULT_SIMULATION, SCENARIOS, simulate, type SimulatedTransaction } from '../domain/simulate.ts';

/** What is known about the example without its history: kept on disk between starts. */
export const Facts = z.object({ key: z.string(), example: ExampleDataset, locations: z.array(z.string()) });
export type Facts = z.infer<typeof Facts>;

/** How long after the example's newest transaction the sandbox scores. */
const AFTER_NEWEST_MS = 1000;
/** Bumped when the kept file's shape or meaning changes. */
const FACTS_FORMAT = 1;
/** Bumped when the kept build's files change shape. */
const BUILT_FORMAT = 1;

/** What kept figures must have been made for: the simulation's settings and the label delay. */
export function factsKey(labelDelay: number): string {
  return createHash('sha256').update(JSON.stringify({ FACTS_FORMAT, DEFAULT_SIMULATION, labelDelay })).digest('hex').slice(0, 16);
}

/** The example's figures as its rows say. */
export function factsOf(rows: readonly SimulatedTransaction[], key: string): Facts {
  const newest = rows.reduce((t, r) => Math.max(t, r.time), -Infinity);
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
    last_transaction_at: new Date(newest).toISOString(),
    sandbox_as_of: new Date(newest + AFTER_NEWEST_MS).toISOString(),
  };
  return { key, example, locations: [...new Set(rows.map((r) => r.location))].sort() };
}

const factsFile = (dir: string) => join(dir, 'sandbox', 'example.json');

/** The kept figures, when they were made for `key`. */
export function readFacts(dir: string, key: string): Facts | undefined {
  try {
    const facts = Facts.parse(JSON.parse(readFileSync(factsFile(dir), 'utf8')));
    return facts.key === key ? facts : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps the figures for the next start (best effort: a read-only DATA_DIR only costs a simulation then). */
export function keepFacts(dir: string | undefined, facts: Facts): Facts {
  if (dir === undefined) return facts;
  try {
    mkdirSync(join(dir, 'sandbox'), { recursive: true });
    writeFileSync(`${factsFile(dir)}.tmp`, JSON.stringify(facts));
    renameSync(`${factsFile(dir)}.tmp`, factsFile(dir));
  } catch {
    // Not kept: the next start simulates again.
  }
  return facts;
}

/** What the build is asked for. */
export interface BuildRequest {
  labelDelay: number;
  /** DATA_DIR, where the build is kept; none: built every time. */
  dir?: string;
  /** The figures the sandbox holds now (kept, or simulated at start). */
  facts: Facts;
}

/** The built sandbox, with the figures its rows gave (they replace kept ones that disagree). */
export interface BuildResult {
  history: History;
  rings: Ring[];
  facts: Facts;
}

/** The sandbox's history and rings: the kept build when it was made for these figures and this
 *  code, else built from the simulated rows (and kept). */
export function buildSandbox(o: BuildRequest): BuildResult {
  // One key for the read and the write (the domain's code read once): it takes only `facts.key`,
  // which the facts made below keep.
  const key = builtKey(o.facts);
  const kept = readBuilt(o.dir, key);
  if (kept) return { ...kept, facts: o.facts };
  const rows = simulate();
  const facts = factsOf(rows, o.facts.key);
  const history = exampleHistory(rows, o.labelDelay);
  const rings = detectRings(history.transactions, Date.parse(facts.example.sandbox_as_of), { labelDelay: o.labelDelay });
  keepBuilt(o.dir, key, history, rings);
  return { history, rings, facts };
}

/** The example's history, built by its constructors from the simulated rows. */
export function exampleHistory(rows: readonly SimulatedTransaction[], labelDelay: number): History {
  const history = new History(labelDelay).withRecords(rows.length);
  for (const r of rows) history.add(r);
  history.compact();
  // Ring detection reads every row as an object: with the names kept as strings, each is the same
  // string every time (a few thousand customers and merchants), not one decoded per row.
  history.transactions.materialiseNames();
  return history;
}

/** What a kept build must have been made for: these figures, this history code, this domain code. */
function builtKey(facts: Facts): string {
  // The domain's own files (the simulator, its random numbers, the rings' detector) beyond the
  // history's (HISTORY_FORMAT).
  const domain = codeDigest(join(import.meta.dirname, '..', 'domain'), 'simulate.').slice(0, 16);
  return `${BUILT_FORMAT}/${facts.key}/${HISTORY_FORMAT}/${domain}`;
}

function readBuilt(dir: string | undefined, key: string): { history: History; rings: Ring[] } | undefined {
  if (dir === undefined) return undefined;
  try {
    const kept = JSON.parse(readFileSync(join(dir, 'sandbox', 'built.json'), 'utf8')) as { key: string; rings: Ring[] };
    if (kept.key !== key) return undefined;
    return { history: historyFromBytes([readFileSync(join(dir, 'sandbox', 'history.bin'))]), rings: kept.rings };
  } catch {
    return undefined;
  }
}

/** Keeps the build for the next start (best effort, as the figures). The history is written first
 *  and the file naming its key last, so a half-written build is never read. */
function keepBuilt(dir: string | undefined, key: string, history: History, rings: readonly Ring[]): void {
  if (dir === undefined) return;
  try {
    const at = join(dir, 'sandbox');
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, `history.bin.${process.pid}.tmp`), Buffer.concat(historyBytes(history)));
    renameSync(join(at, `history.bin.${process.pid}.tmp`), join(at, 'history.bin'));
    writeFileSync(join(at, `built.json.${process.pid}.tmp`), JSON.stringify({ key, rings }));
    renameSync(join(at, `built.json.${process.pid}.tmp`), join(at, 'built.json'));
  } catch {
    // Not kept: the next start builds again.
  }
}
