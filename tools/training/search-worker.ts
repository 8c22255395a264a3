// The worker thread of a parallel settings search (parallel-search.ts): scores one setting on the
// folds it is handed. The folds' arrays live in shared memory, so a task carries only references.

import { scoreSetting, type Params, type PreparedFold } from './selection.ts';

export interface SearchTask {
  folds: PreparedFold[];
  width: number;
  categorical?: number[];
  params: Params;
  iterations: number[];
}

export default function scoreTask(task: SearchTask): number[] {
  return scoreSetting(task.folds, task, task.params, task.iterations);
}
