// Imported transactions' point-in-time features: for each imported transaction without features,
// the features it would have been scored with at its own time. The organization's whole history is
// replayed in time order (every source) through the feature code that scores
// (domain/features/extract.ts), each transaction's features taken before it joins the history, so
// they see only strictly older transactions and a label only once it was known (History). They are
// stored where a scored transaction's go, so training and the reports read both alike
// (docs/model.md, "An organization's first day"). An import that arrives out of order, or after
// scoring began, gets features as of each transaction's own time all the same: the replay orders by
// time, whatever the order of arrival. Runs after each history import (history-import-job.ts);
// stored features are never changed, so a second run finds nothing to do. The replay runs on a
// thread of its own (imported-features-worker.ts): this module starts it, answers its reads and
// writes on the embedded database, and reports its progress.

import { Worker } from 'node:worker_threads';
import type { Channel } from '../domain/channels.ts';
import type { ModelBundle } from '../model/bundle-types.ts';
import type { DatabaseAddress, Db } from '../storage/db.ts';
import type { FeatureBatch } from '../storage/imported-features.ts';
import { organizationData } from '../storage/organization-data.ts';

export interface ImportedFeaturesRun {
  /** Called after each page with the share of the featureless transactions done. */
  progress?: (fraction: number) => unknown;
  /** Asked between pages: true stops the replay (what was stored stays; a later run goes on). */
  stopped?: () => boolean;
  /** About how many transactions are without features, when the caller knows (an import job: the
   *  rows it stored), for the progress; else they are counted first, and none means no replay. */
  expected?: number;
}

/** What the replay's thread (imported-features-worker.ts) is sent: what to replay (with where to
 *  connect on PostgreSQL), then on the embedded database the answer to each of its requests. */
export type ToReplay =
  | { kind: 'start'; organizationId: string; labelDelay: number; channels: { name: Channel; features: readonly string[] }[]; address?: DatabaseAddress }
  | { kind: 'page'; id: number; text: string | null }
  | { kind: 'stored'; id: number; count: number }
  /** The answer to its progress: whether to go on to the next page. */
  | { kind: 'next'; id: number; stop: boolean };

/** What it sends: on the embedded database a page to read or a batch to store; its progress after
 *  each page (answered: go on, or stop), and its end. */
export type FromReplay =
  | { kind: 'read'; id: number; after: [number, number] | undefined }
  | { kind: 'store'; id: number; batch: FeatureBatch }
  | { kind: 'progress'; id: number; stored: number }
  | { kind: 'done'; stored: number }
  | { kind: 'failed'; message: string };

const WORKER = new URL(`./imported-features-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** Computes and stores the features of the organization's imported transactions that have none,
 *  as of each one's own time; returns how many were stored. */
export async function computeImportedFeatures(db: Db, organizationId: string, bundle: ModelBundle, run: ImportedFeaturesRun = {}): Promise<number> {
  const data = organizationData(db, organizationId).importedFeatures;
  const total = run.expected ?? (await data.featureless());
  if (total === 0) return 0;
  const worker = new Worker(WORKER);
  const address = db.address?.();
  // The embedded database's reads and writes for the thread, as background work: the
  // organization's scores go before each.
  const lane = organizationData(db.background(), organizationId).importedFeatures;
  try {
    return await new Promise<number>((resolve, reject) => {
      const failed = (err: unknown) => reject(err instanceof Error ? err : new Error(String(err)));
      const answer = (work: () => Promise<ToReplay>) => work().then((m) => worker.postMessage(m), failed);
      worker.on('message', (m: FromReplay) => {
        switch (m.kind) {
          case 'read':
            return answer(async () => ({ kind: 'page', id: m.id, text: await lane.pageText(m.after) }));
          case 'store':
            return answer(async () => ({ kind: 'stored', id: m.id, count: await lane.store(m.batch) }));
          case 'progress':
            return answer(async () => {
              await run.progress?.(Math.min(1, m.stored / total));
              return { kind: 'next', id: m.id, stop: run.stopped?.() === true };
            });
          case 'done':
            return resolve(m.stored);
          case 'failed':
            return failed(new Error(`computing imported transactions' features failed: ${m.message}`));
        }
      });
      worker.on('error', failed);
      worker.on('exit', (code) => failed(new Error(`the features' thread ended (exit code ${code}) before the replay did`)));
      worker.postMessage({
        kind: 'start',
        organizationId,
        labelDelay: bundle.file.training.label_delay_ms,
        channels: bundle.channels.map((c) => ({ name: c.name, features: c.features })),
        ...(address ? { address } : {}),
      } satisfies ToReplay);
    });
  } finally {
    await worker.terminate();
  }
}
