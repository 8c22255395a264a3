// The worker thread of a parallel settings search (parallel-search.ts): scores one setting on the
// folds it is handed, by validation average precision (the default export) or by both average
// precision and ROC AUC (`scoreFigures`). The folds' arrays live in shared memory, so a task
// carries only references.

import { averagePrecision, rocAuc } from '../model/metrics.ts';
import { scoreSetting, scoreSettingOn, type Params, type PreparedFold } from './selection.ts';

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

export function scoreFigures(task: SearchTask): { average_precision: number[]; roc_auc: number[] } {
  const [ap, auc] = scoreSettingOn(task.folds, task, task.params, task.iterations, [averagePrecision, rocAuc]);
  return { average_precision: ap!, roc_auc: auc! };
}
