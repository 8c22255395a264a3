// selection.ts's search with its settings scored side by side on worker threads (Piscina): the
// settings are independent, each one trains single-threaded and seeded, so the choice is the same
// whatever the number of threads or the order they finish in, and the search takes about 1 / threads
// of the time. The folds are gathered once into shared memory, which every thread reads in place.
// The metric is average precision (a function cannot cross to a thread); `figuresOnThreads` scores
// fixed settings by average precision and ROC AUC both (feature-groups.ts).

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import {
  bestOf,
  candidatesOf,
  checkpointsFor,
  prepareFolds,
  SEARCH_DEFAULTS,
  selectionOf,
  trialOf,
  type Fold,
  type Params,
  type SearchOptions,
  type Selection,
  type SelectionData,
  type Trial,
} from './selection.ts';
import type { SearchTask } from './search-worker.ts';

const WORKER = new URL(`./search-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

/** The best setting and number of trees by mean validation average precision over `folds`, every
 *  setting trained with `base` under it, on up to `threads` worker threads. */
export async function searchOnThreads(
  data: SelectionData,
  folds: readonly Fold[],
  base: Params,
  options: Partial<SearchOptions> = {},
  threads = availableParallelism(),
): Promise<Selection> {
  const o = { ...SEARCH_DEFAULTS, ...options };
  const candidates = candidatesOf(o);
  const trials: Trial[] = new Array(candidates.length);
  const finished: Trial[] = [];
  await onThreads(data, folds, candidates.length, threads, (run) =>
    Promise.all(
      candidates.map(async (params, k) => {
        const iterations = checkpointsFor(params, o);
        const trial = trialOf(params, iterations, (await run({ params: { ...base, ...params }, iterations })) as number[]);
        trials[k] = trial;
        finished.push(trial);
        o.progress(finished.length, candidates.length, bestOf(finished));
      }),
    ),
  );
  return selectionOf(trials);
}

/** Validation average precision and ROC AUC (means over `folds`) of each of `settings` with
 *  `iterations` trees, on up to `threads` worker threads, in the order given. */
export async function figuresOnThreads(
  data: SelectionData,
  folds: readonly Fold[],
  settings: readonly Params[],
  iterations: number,
  threads = availableParallelism(),
): Promise<{ average_precision: number; roc_auc: number }[]> {
  return onThreads(data, folds, settings.length, threads, (run) =>
    Promise.all(
      settings.map(async (params) => {
        const f = (await run({ params, iterations: [iterations] }, 'scoreFigures')) as { average_precision: number[]; roc_auc: number[] };
        return { average_precision: f.average_precision[0]!, roc_auc: f.roc_auc[0]! };
      }),
    ),
  );
}

/** `use` with a runner of search-worker tasks (its default export, or the named one) over `folds`
 *  gathered once into shared memory, on up to `threads` threads (no more than `tasks`); the threads
 *  are stopped after. */
async function onThreads<T>(
  data: SelectionData,
  folds: readonly Fold[],
  tasks: number,
  threads: number,
  use: (run: (task: Pick<SearchTask, 'params' | 'iterations'>, name?: string) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const shared = prepareFolds(data, folds, (n) => new Float64Array(new SharedArrayBuffer(n * Float64Array.BYTES_PER_ELEMENT)));
  const pool = new Piscina({ filename: WORKER, minThreads: 1, maxThreads: Math.max(1, Math.min(threads, tasks)) });
  try {
    return await use((task, name) =>
      pool.run({ folds: shared, width: data.width, categorical: data.categorical, ...task } satisfies SearchTask, name ? { name } : {}),
    );
  } finally {
    await pool.destroy();
  }
}
