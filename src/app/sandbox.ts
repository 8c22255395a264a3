// The public sandbox: what `POST /api/risk/score` (guests, the dashboard's score form) scores
// against. It is the built-in example dataset (the service simulator's default run, the data the
// built-in model was trained on) at its own simulated times, scored as of one second after its
// newest transaction, so the same request always gets the same answer. It is never written to and
// holds no organization's data.
//
// Start-up does not simulate, so that it stays quick. What the service says about the example
// without scoring it (its figures, the moment it scores at, its locations) is kept in a small file
// under DATA_DIR once known, keyed by the simulation's settings and the label delay. The history
// itself (a quarter of a million transactions) and its rings are built on first use (the first
// sandbox score, ring listing or example import waits for it); the build checks the kept figures
// against the rows it simulated and replaces them if they differ. The built history (as a snapshot,
// domain/history/snapshot.ts) and its rings are kept beside the figures, for the same settings and
// the same domain code (the simulator's and the history's): the next start's first use reads them
// in a fraction of the time a build takes, and any change to that code builds afresh.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { settleMemory } from '../addon/memory.ts';
import { codeDigest } from '../domain/code-digest.ts';
import { History } from '../domain/history/history.ts';
import { HISTORY_FORMAT, historyBytes, historyFromBytes } from '../domain/history/snapshot.ts';
import { detectRings, type Ring } from '../domain/rings.ts';
import { RingIndex } from '../scoring/scorer.ts';
import { DEFAULT_SIMULATION, simulate, SCENARIOS, type SimulatedTransaction } from '../domain/simulate.ts';
import { ExampleDataset } from '../contract/datasets.ts';

/** What is known about the example without its history: kept on disk between starts. */
const Facts = z.object({ key: z.string(), example: ExampleDataset, locations: z.array(z.string()) });
type Facts = z.infer<typeof Facts>;

/** How long after the example's newest transaction the sandbox scores. */
const AFTER_NEWEST_MS = 1000;
/** Bumped when the kept file's shape or meaning changes. */
const FACTS_FORMAT = 1;
/** Bumped when the kept build's files change shape. */
const BUILT_FORMAT = 1;
function factsOf(rows: readonly SimulatedTransaction[]): Facts {
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
  return { key: '', example, locations: [...new Set(rows.map((r) => r.location))].sort() };
}

/** The history and rings, built on first use. */
interface Built {
  history: History;
  ringIndex: RingIndex;
}

export class Sandbox {
  private readonly labelDelay: number;
  private readonly dir?: string;

  private facts: Facts;
  private built: Built | undefined;

  /**
   * @param labelDelay the model's label delay (the sandbox's labels become known that long after
   *   their transactions).
   * @param dir where the example's figures are kept between starts (DATA_DIR); none: simulated at once.
   */
  constructor(labelDelay: number, dir?: string) {
    this.labelDelay = labelDelay;
    this.dir = dir;
    const key = createHash('sha256').update(JSON.stringify({ FACTS_FORMAT, DEFAULT_SIMULATION, labelDelay })).digest('hex').slice(0, 16);
    const kept = dir === undefined ? undefined : this.read(key);
    // Without kept figures the rows are simulated now and dropped: the build simulates them again
    // rather than hold a quarter of a million objects until first use.
    this.facts = kept ?? this.remember({ ...factsOf(simulate()), key });
  }

  /** The example's figures (GET /api/datasets/example). */
  get example(): ExampleDataset {
    return this.facts.example;
  }

  /** When sandbox scores are made (epoch ms). */
  get asOf(): number {
    return Date.parse(this.facts.example.sandbox_as_of);
  }

  /** Its transactions' locations, alphabetical. */
  get locations(): readonly string[] {
    return this.facts.locations;
  }

  /** How many transactions it holds. */
  get size(): number {
    return this.facts.example.rows;
  }

  /** The example history; built on first use. */
  get history(): History {
    return this.build().history;
  }

  /** Its flagged rings (`ringIndex.rings`), looked up by merchant and channel; built on first use. */
  get ringIndex(): RingIndex {
    return this.build().ringIndex;
  }

  private build(): Built {
    if (this.built) return this.built;
    const kept = this.readBuilt();
    if (kept) {
      this.built = { history: kept.history, ringIndex: new RingIndex(kept.rings) };
      return this.built;
    }
    const rows = simulate();
    const fresh = { ...factsOf(rows), key: this.facts.key };
    // Kept figures that disagree with the rows (the simulator changed since): the rows decide.
    if (!isDeepStrictEqual(fresh, this.facts)) this.facts = this.remember(fresh);
    const history = new History(this.labelDelay).withRecords(rows.length);
    for (const r of rows) history.add(r);
    history.compact();
    // Ring detection reads every row as an object: with the names kept as strings, each is the same
    // string every time (a few thousand customers and merchants), not one decoded per row.
    history.transactions.materialiseNames();
    const rings = detectRings(history.transactions, this.asOf, { labelDelay: this.labelDelay });
    this.built = { history, ringIndex: new RingIndex(rings) };
    this.keepBuilt(history, rings);
    // The build drops a quarter of a million simulated rows and the detector's graph: hand their
    // pages back now, as start-up does for its own garbage, or they stay resident.
    settleMemory();
    return this.built;
  }

  private file(): string {
    return join(this.dir!, 'sandbox', 'example.json');
  }

  /** What a kept build must have been made for: these figures, this history code, this domain code. */
  private builtKey(): string {
    // The domain's own files (the simulator, its random numbers, the rings' detector) beyond the
    // history's (HISTORY_FORMAT), read here rather than at start: a server that never uses the
    // sandbox never reads them.
    const domain = codeDigest(join(import.meta.dirname, '..', 'domain'), 'simulate.').slice(0, 16);
    return `${BUILT_FORMAT}/${this.facts.key}/${HISTORY_FORMAT}/${domain}`;
  }

  /** The kept build, when it was made for this key (else none: it is built again). */
  private readBuilt(): { history: History; rings: Ring[] } | undefined {
    if (this.dir === undefined) return undefined;
    try {
      const kept = JSON.parse(readFileSync(join(this.dir, 'sandbox', 'built.json'), 'utf8')) as { key: string; rings: Ring[] };
      if (kept.key !== this.builtKey()) return undefined;
      return { history: historyFromBytes([readFileSync(join(this.dir, 'sandbox', 'history.bin'))]), rings: kept.rings };
    } catch {
      return undefined;
    }
  }

  /** Keeps the build for the next start (best effort, as the figures). The history is written
   *  first and the file naming its key last, so a half-written build is never read. */
  private keepBuilt(history: History, rings: readonly Ring[]): void {
    if (this.dir === undefined) return;
    try {
      const dir = join(this.dir, 'sandbox');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `history.bin.${process.pid}.tmp`), Buffer.concat(historyBytes(history)));
      renameSync(join(dir, `history.bin.${process.pid}.tmp`), join(dir, 'history.bin'));
      writeFileSync(join(dir, `built.json.${process.pid}.tmp`), JSON.stringify({ key: this.builtKey(), rings }));
      renameSync(join(dir, `built.json.${process.pid}.tmp`), join(dir, 'built.json'));
    } catch {
      // Not kept: the next start builds again.
    }
  }

  private read(key: string): Facts | undefined {
    try {
      const facts = Facts.parse(JSON.parse(readFileSync(this.file(), 'utf8')));
      return facts.key === key ? facts : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keeps the figures for the next start (best effort: a read-only DATA_DIR only costs a simulation then). */
  private remember(facts: Facts): Facts {
    if (this.dir === undefined) return facts;
    try {
      const file = this.file();
      mkdirSync(join(this.dir, 'sandbox'), { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(facts));
      renameSync(`${file}.tmp`, file);
    } catch {
      // Not kept: the next start simulates again.
    }
    return facts;
  }
}
