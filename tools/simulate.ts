// `npm run simulate -- [--preset service|handbook] [--seed N] [--customers N] [--merchants N]
// [--days N] [--out FILE]` (`--help` lists them): writes simulated transactions as CSV (dataset
// format plus `scenario`) to FILE or stdout. `service` is this project's simulator (the default);
// `handbook` re-implements the fraud-detection handbook's (its customers, terminals as merchants,
// 183 days from 2018-04-01). The options are checked before simulating (command-line.ts), so a
// typo or a missing output folder fails at once instead of after the run.

import { writeFileSync } from 'node:fs';
import { commandLine, oneOf, outputFile, wholeNumber } from '../src/command-line.ts';
import { HANDBOOK_DEFAULTS, handbookCsv, simulateHandbook } from '../src/training/handbook.ts';
import { DEFAULT_SIMULATION, simulate, toCsv } from '../src/domain/simulate.ts';

const S = DEFAULT_SIMULATION;
const H = HANDBOOK_DEFAULTS;
const values = commandLine({
  name: 'simulate',
  about: 'Writes seeded simulated transactions as CSV (the dataset format plus a scenario column).',
  options: {
    preset: oneOf(['service', 'handbook'], "this project's simulator, or the handbook's re-implemented (default service)", { default: 'service' }),
    seed: wholeNumber(`the simulator's seed (default ${S.seed} for service, ${H.seed} for handbook)`),
    customers: wholeNumber(`customers (default ${S.customers} for service, ${H.customers} for handbook)`, { min: 1 }),
    merchants: wholeNumber(`merchants, the handbook's terminals (default ${S.merchants} for service, ${H.terminals} for handbook)`, { min: 1 }),
    days: wholeNumber(`days simulated (default ${S.days} for service, ${H.days} for handbook)`, { min: 1 }),
    out: outputFile('FILE', 'where to write the CSV (default: standard output)'),
  },
});

let csv: string;
let count: number;
let fraud: number;
if (values.preset === 'handbook') {
  const rows = simulateHandbook({
    seed: values.seed ?? H.seed,
    customers: values.customers ?? H.customers,
    terminals: values.merchants ?? H.terminals,
    days: values.days ?? H.days,
  });
  [csv, count, fraud] = [handbookCsv(rows), rows.length, rows.filter((r) => r.label === 1).length];
} else {
  const rows = simulate({
    seed: values.seed ?? S.seed,
    customers: values.customers ?? S.customers,
    merchants: values.merchants ?? S.merchants,
    days: values.days ?? S.days,
  });
  [csv, count, fraud] = [toCsv(rows), rows.length, rows.filter((r) => r.label === 1).length];
}
if (values.out) {
  writeFileSync(values.out, csv);
  console.error(`wrote ${count} transactions (${fraud} fraud, ${((100 * fraud) / count).toFixed(2)} %) to ${values.out}`);
} else {
  process.stdout.write(csv);
}
