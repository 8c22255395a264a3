// The scoring pipeline, step by step for one transaction (a row): what single scoring (scorer.ts)
// and batch scoring (jobs/batch-score.ts) both do to every transaction, defined once. Its own
// module so that the batch job's worker thread loads the steps without the rest of a response
// (rules, evidence).

import { writeFeatures, type ChannelMatrices } from '../domain/features/extract.ts';
import type { History } from '../domain/history/history.ts';
import type { Transaction } from '../domain/transaction.ts';
import type { ModelBundle, ModeName } from '../model/bundle-types.ts';
import { combine, combineInto, isCold, type Combined } from '../model/combine.ts';
import { storedPriorOffsets, storedWidth } from './stored-features.ts';

/** How many earlier transactions a history holds of a transaction's customer, merchant and channel. */
export type Priors = ReturnType<History['priors']>;

/**
 * The scoring pipeline's per-row steps: the one definition that a single score (scorer.ts) and a
 * file's rows (jobs/batch-score.ts) take every transaction through, so that a row of a file is
 * answered as the same transaction sent alone would be.
 * 1. `priors`: what the history holds of the transaction's entities (strictly earlier ones), which
 *    decides the cold-start rule (`cold`);
 * 2. `features`: the four channels' features from that history (training's code), into a row;
 * 3. `model`: the boosters' raw scores (evaluated by the caller: one row, or a batch of them)
 *    stacked and calibrated, with the cold-start floor, the decision and band, and each channel's
 *    score and attribution.
 * A single score then runs the rules, explains and gathers evidence; a batch explains its rows in
 * the addon, a batch at a time, as it writes their result lines. A transaction recorded with its
 * features (stored-features.ts) is scored again from them by step 3 alone (`storedScores`).
 */
export class ScoringPipeline {
  readonly bundle: ModelBundle;

  private readonly minPrior: number;

  constructor(bundle: ModelBundle) {
    this.bundle = bundle;
    this.minPrior = bundle.file.cold_start.min_prior;
  }

  priors(tx: Transaction, history: History): Priors {
    return history.priors(tx);
  }

  cold(priors: Priors): boolean {
    return isCold(priors, this.minPrior);
  }

  features(tx: Transaction, history: History, into: ChannelMatrices, row: number): void {
    writeFeatures(tx, history, into, row);
  }

  /** Step 3 into `out` from `at` (combineInto's layout); returns the decision and band codes. */
  model(raw: ArrayLike<number>, cold: boolean, mode: ModeName, out: Float64Array, at: number): number {
    return combineInto(this.bundle, raw, cold, mode, out, at);
  }

  /**
   * Step 3 for `n` transactions from their stored features (`rows`: each row every channel's, in
   * this model's order, one after the other), with no history: each channel's block of the rows
   * evaluated by its booster in the addon as one batch, and the cold-start rule read from the
   * prior counts the row holds (what `priors` counted when its features were made). Each row's
   * risk, and its decision and band code (`model`'s).
   */
  storedScores(rows: Float32Array, n: number, mode: ModeName): { risk: Float64Array; codes: Uint8Array } {
    const channels = this.bundle.channels;
    const width = storedWidth(channels);
    if (rows.length !== n * width) throw new Error(`${rows.length} stored features for ${n} rows of ${width}`);
    const k = channels.length;
    const raw = new Float64Array(n * k);
    let offset = 0;
    channels.forEach((c, j) => {
      const w = c.features.length;
      const block = new Float64Array(n * w);
      for (let i = 0; i < n; i++) for (let f = 0; f < w; f++) block[i * w + f] = rows[i * width + offset + f]!;
      const margins = c.engine.predictRawBatch(block);
      for (let i = 0; i < n; i++) raw[i * k + j] = margins[i]!;
      offset += w;
    });
    const prior = storedPriorOffsets(channels);
    const out = new Float64Array(1 + 2 * k);
    const risk = new Float64Array(n);
    const codes = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const at = i * width;
      const cold = this.cold({ customer: rows[at + prior.customer]!, merchant: rows[at + prior.merchant]!, channel: rows[at + prior.channel]! });
      codes[i] = this.model(raw.subarray(i * k, (i + 1) * k), cold, mode, out, 0);
      risk[i] = out[0]!;
    }
    return { risk, codes };
  }

  /** Step 3 as the objects a response holds. */
  combined(raw: ArrayLike<number>, cold: boolean, mode: ModeName): Combined {
    return combine(this.bundle, raw, cold, mode);
  }
}
