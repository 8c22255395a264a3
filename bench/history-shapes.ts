// bench:history, shapes part: the same scores against the built-in example history (255,552
// transactions) built by its constructors in this process, and against the public sandbox's, which
// is the same history built on a thread and read back from its parts, as a server holds both kinds
// (the public sandbox and large organizations read back, small organizations built where they are
// scored). The baseline is the built history scored alone, before the read-back one is scored;
// then the read-back one: its first batches (what a restart's first scores pay while the scoring
// code meets its objects) and warmed; then both in alternate batches. A read-back history whose
// objects had hidden classes of their own would be slower alone and make both slower mixed.

import { exampleHistory } from '../src/app/sandbox-build.ts';
import type { History } from '../src/domain/history/history.ts';
import { simulate } from '../src/domain/simulate.ts';
import { exampleScoring } from './rules-scorer.ts';

export interface ShapesFigures {
  transactions: number;
  /** Microseconds per score (median of the samples). */
  us_per_score: { built_alone: number; read_back_first: number[]; read_back: number; mixed_built: number; mixed_read_back: number };
  ratio: { read_back: number; mixed: number; read_back_first_batch: number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

export async function measureShapes(o: { quick: boolean; log: (line: string) => void }): Promise<ShapesFigures> {
  const ex = await exampleScoring();
  const built = exampleHistory(simulate(), ex.base.history.labelDelay);
  const readBack = ex.base.history;
  const batch = (h: History, n: number) => {
    const context = { ...ex.base, history: h };
    const t0 = performance.now();
    for (let i = 0; i < n; i++) ex.scorer.scoreToRecord(ex.inputs[i % ex.inputs.length]!, context);
    return ((performance.now() - t0) * 1000) / n;
  };
  const N = o.quick ? 1000 : 2000;
  const SAMPLES = o.quick ? 5 : 9;
  for (let i = 0; i < 5; i++) batch(built, N);
  const builtAlone = median(Array.from({ length: SAMPLES }, () => batch(built, N)));
  const first = Array.from({ length: 4 }, () => batch(readBack, 300));
  for (let i = 0; i < 5; i++) batch(readBack, N);
  const readAlone = median(Array.from({ length: SAMPLES }, () => batch(readBack, N)));
  const mixedBuilt: number[] = [];
  const mixedRead: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    mixedBuilt.push(batch(built, N));
    mixedRead.push(batch(readBack, N));
  }
  const figures: ShapesFigures = {
    transactions: built.size,
    us_per_score: {
      built_alone: round(builtAlone),
      read_back_first: first.map((x) => round(x)),
      read_back: round(readAlone),
      mixed_built: round(median(mixedBuilt)),
      mixed_read_back: round(median(mixedRead)),
    },
    ratio: {
      read_back: round(readAlone / builtAlone, 3),
      mixed: round((median(mixedBuilt) + median(mixedRead)) / 2 / builtAlone, 3),
      read_back_first_batch: round(first[0]! / builtAlone, 3),
    },
  };
  o.log(
    `shapes: µs per score, built alone ${figures.us_per_score.built_alone}; read back: first batches of 300 ${figures.us_per_score.read_back_first.join(', ')}, warmed ${figures.us_per_score.read_back} (×${figures.ratio.read_back}); both alternately ${figures.us_per_score.mixed_built} / ${figures.us_per_score.mixed_read_back} (×${figures.ratio.mixed})`,
  );
  return figures;
}
