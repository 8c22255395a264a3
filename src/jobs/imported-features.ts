// Imported transactions' point-in-time features: for each imported transaction without features,
// the features it would have been scored with at its own time. The organization's whole history is
// replayed in time order (every source) through the feature code that scores
// (domain/features/extract.ts), each transaction's features taken before it joins the history, so
// they see only strictly older transactions and a label only once it was known (History). They are
// stored where a scored transaction's go, so training and the reports read both alike
// (docs/model.md, "An organization's first day"). An import that arrives out of order, or after
// scoring began, gets features as of each transaction's own time all the same: the replay orders by
// time, whatever the order of arrival. Runs after each history import (history-import-job.ts);
// stored features are never changed, so a second run finds nothing to do.

import { setImmediate as nextTurn } from 'node:timers/promises';
import { allocateFeatures, writeFeatures } from '../domain/features/extract.ts';
import { storedFeatures } from '../scoring/stored-features.ts';
import { History } from '../domain/history/history.ts';
import type { ModelBundle } from '../model/bundle-types.ts';
import type { Db } from '../storage/db.ts';
import { historyTransaction } from '../storage/live-rows.ts';
import { organizationData } from '../storage/organization-data.ts';
import { analyzeTransactions, REPLAY_PAGE_ROWS } from '../storage/imported-features.ts';

/** Transactions replayed between two turns of the event loop: a slice holds the loop a few
 *  milliseconds, so the organization's scoring goes on meanwhile. */
const SLICE_ROWS = 500;

export interface ImportedFeaturesRun {
  /** Called after each page with the share of the featureless transactions done. */
  progress?: (fraction: number) => unknown;
  /** Asked between pages: true stops the replay (what was stored stays; a later run goes on). */
  stopped?: () => boolean;
}

/** Computes and stores the features of the organization's imported transactions that have none,
 *  as of each one's own time; returns how many were stored. */
export async function computeImportedFeatures(db: Db, organizationId: string, bundle: ModelBundle, run: ImportedFeaturesRun = {}): Promise<number> {
  const data = organizationData(db, organizationId).importedFeatures;
  const total = await data.featureless();
  if (total === 0) return 0;
  if (total >= REPLAY_PAGE_ROWS) await analyzeTransactions(db);
  const history = new History(bundle.file.training.label_delay_ms).withRecords();
  const m = allocateFeatures(1);
  let stored = 0;
  let after: [number, number] | undefined;
  for (;;) {
    if (run.stopped?.()) break;
    const page = await data.page(after);
    if (page.length === 0) break;
    for (let from = 0; from < page.length; from += SLICE_ROWS) {
      if (from > 0) await nextTurn();
      const pending: { seq: number; features: Float32Array }[] = [];
      for (const r of page.slice(from, from + SLICE_ROWS)) {
        const tx = historyTransaction(r);
        if (r.featureless) {
          writeFeatures(tx, history, m, 0);
          pending.push({ seq: r.seq, features: storedFeatures(bundle.channels, m) });
        }
        history.add(tx);
      }
      // A slice's features in a statement of their own: on the embedded database, whose one
      // connection the organization's scores share, none waits behind more than a slice's.
      stored += await data.store(pending);
    }
    const last = page[page.length - 1]!;
    after = [last.time, last.seq];
    await run.progress?.(Math.min(1, stored / total));
    await nextTurn();
  }
  return stored;
}
