// Time split for training and evaluation: train, then validation, then test, each separated by a
// gap of the label delay so that no split's labels can have been known to features of the next, and
// the evaluation never sees its test period while fitting anything. Rows must be time-ordered.

export interface SplitOptions {
  /** Share of the time span for validation and for test. */
  validationShare: number;
  testShare: number;
  /** Gap between splits, milliseconds (the label delay). */
  gap: number;
}

export interface Split {
  train: number[];
  validation: number[];
  test: number[];
  /** [start, end) times of each split. */
  bounds: Record<'train' | 'validation' | 'test', [number, number]>;
}

export function splitByTime(times: ArrayLike<number>, o: SplitOptions): Split {
  if (times.length === 0) throw new Error('no rows to split');
  const first = times[0]!;
  const last = times[times.length - 1]! + 1;
  const span = last - first;
  const testStart = last - span * o.testShare;
  const validationEnd = testStart - o.gap;
  const validationStart = validationEnd - span * o.validationShare;
  const trainEnd = validationStart - o.gap;
  if (trainEnd <= first) throw new Error('the data spans too little time for these shares and gap');
  const split: Split = {
    train: [],
    validation: [],
    test: [],
    bounds: { train: [first, trainEnd], validation: [validationStart, validationEnd], test: [testStart, last] },
  };
  for (let i = 0; i < times.length; i++) {
    const t = times[i]!;
    if (t < trainEnd) split.train.push(i);
    else if (t >= validationStart && t < validationEnd) split.validation.push(i);
    else if (t >= testStart) split.test.push(i);
  }
  return split;
}
