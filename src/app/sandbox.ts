// The public sandbox: what `POST /api/risk/score` (guests, the dashboard's score form) scores
// against. It is the built-in example dataset (the service simulator's default run, the data the
// built-in model was trained on) at its own simulated times, scored as of one second after its
// newest transaction, so the same request always gets the same answer. It is never written to and
// holds no organization's data.
//
// Start-up does not simulate, so that it stays quick. What the service says about the example
// without scoring it (its figures, the moment it scores at, its locations) is kept in a small file
// under DATA_DIR once known, keyed by the simulation's settings and the label delay. The history
// itself (a quarter of a million transactions) and its rings are built on first use, on a thread of
// their own (sandbox-build.ts; the first sandbox score, ring listing or example import waits for
// it, and every other request is answered meanwhile); the build checks the kept figures against the
// rows it simulated and replaces them if they differ. The built history and its rings are kept
// beside the figures, for the same settings and the same domain code: the next start's first use
// reads them in a fraction of the time a build takes.

import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { ExampleDataset } from '../contract/datasets.ts';
import type { History } from '../domain/history/history.ts';
import { historyFromParts, type HistoryParts } from '../domain/history/snapshot.ts';
import type { Ring } from '../domain/rings.ts';
import { simulate } from '../domain/simulate.ts';
import { RingIndex } from '../scoring/scorer.ts';
import { type BuildRequest, type Facts, factsKey, factsOf, keepFacts, readFacts } from './sandbox-build.ts';

/** The example's history and its rings, built on first use. */
export interface SandboxBuilt {
  history: History;
  /** Its flagged rings (`ringIndex.rings`), looked up by merchant and channel. */
  ringIndex: RingIndex;
}

/** What the build's thread answers. */
type Built = { ok: true; parts: HistoryParts; rings: Ring[]; facts: Facts } | { ok: false; message: string };

const WORKER = new URL(`./sandbox-build-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

export class Sandbox {
  private readonly labelDelay: number;
  private readonly dir?: string;

  private facts: Facts;
  private building: Promise<SandboxBuilt> | undefined;

  /**
   * @param labelDelay the model's label delay (the sandbox's labels become known that long after
   *   their transactions).
   * @param dir where the example's figures are kept between starts (DATA_DIR); none: simulated at once.
   */
  constructor(labelDelay: number, dir?: string) {
    this.labelDelay = labelDelay;
    this.dir = dir;
    const key = factsKey(labelDelay);
    // Without kept figures the rows are simulated now and dropped: the build simulates them again
    // rather than hold a quarter of a million objects until first use.
    this.facts = (dir === undefined ? undefined : readFacts(dir, key)) ?? keepFacts(dir, factsOf(simulate(), key));
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

  /** The example's history and rings: built on first use, on a thread of its own (whoever asks
   *  meanwhile waits for the same build); a build that failed is tried again at the next use. */
  built(): Promise<SandboxBuilt> {
    this.building ??= this.buildOnThread().catch((e: unknown) => {
      this.building = undefined;
      throw e;
    });
    return this.building;
  }

  private buildOnThread(): Promise<SandboxBuilt> {
    const request: BuildRequest = { labelDelay: this.labelDelay, facts: this.facts, ...(this.dir === undefined ? {} : { dir: this.dir }) };
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER, { workerData: request });
      worker.once('message', (m: Built) => {
        if (!m.ok) return reject(new Error(`building the public sandbox failed: ${m.message}`));
        try {
          // Kept figures that disagree with the rows (the simulator changed since): the rows decide.
          if (!isDeepStrictEqual(m.facts, this.facts)) this.facts = keepFacts(this.dir, m.facts);
          resolve({ history: historyFromParts(m.parts), ringIndex: new RingIndex(m.rings) });
        } catch (e) {
          reject(e);
        }
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the public sandbox's build thread ended (exit code ${code}) before the build did`)));
    });
  }
}
