// Files for the drift tests, made from simulated transactions: the same file without its label
// column (a file without outcomes), and with its labels shuffled by a seeded Fisher–Yates (the
// payments as the model knows them, outcomes that have nothing to do with them).

import { Rng } from '../../src/domain/rng.ts';
import { toCsv, type SimulatedTransaction } from '../../src/domain/simulate.ts';

/** The CSV without its label column. */
export function unlabelled(rows: SimulatedTransaction[]): string {
  const lines = toCsv(rows).trimEnd().split('\n');
  const at = lines[0]!.split(',').indexOf('label');
  return `${lines
    .map((l) =>
      l
        .split(',')
        .filter((_, i) => i !== at)
        .join(','),
    )
    .join('\n')}\n`;
}

/** The rows with their labels shuffled among them, seeded. */
export function shuffledLabels(rows: SimulatedTransaction[], seed: number): SimulatedTransaction[] {
  const rng = new Rng(seed);
  const labels = rows.map((r) => r.label);
  for (let i = labels.length - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [labels[i], labels[j]] = [labels[j]!, labels[i]!];
  }
  return rows.map((r, i) => ({ ...r, label: labels[i]! }));
}
