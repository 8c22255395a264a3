// `npm run simulate -- [--preset service|handbook] [--seed N] [--customers N] [--merchants N]
// [--days N] [--out FILE]`: writes simulated transactions as CSV (dataset format plus `scenario`)
// to FILE or stdout. `service` is this project's simulator (the default); `handbook` re-implements
// the fraud-detection handbook's (its customers, terminals as merchants, 183 days from 2018-04-01).

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { HANDBOOK_DEFAULTS, handbookCsv, simulateHandbook } from './handbook.ts';
import { DEFAULT_SIMULATION, simulate, toCsv } from './simulate.ts';

const { values } = parseArgs({
  options: {
    preset: { type: 'string', default: 'service' },
    seed: { type: 'string' },
    customers: { type: 'string' },
    merchants: { type: 'string' },
    days: { type: 'string' },
    out: { type: 'string' },
  },
});
const int = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number.parseInt(v, 10));
let csv: string;
let count: number;
let fraud: number;
if (values.preset === 'handbook') {
  const rows = simulateHandbook({
    seed: int(values.seed, HANDBOOK_DEFAULTS.seed),
    customers: int(values.customers, HANDBOOK_DEFAULTS.customers),
    terminals: int(values.merchants, HANDBOOK_DEFAULTS.terminals),
    days: int(values.days, HANDBOOK_DEFAULTS.days),
  });
  [csv, count, fraud] = [handbookCsv(rows), rows.length, rows.filter((r) => r.label === 1).length];
} else if (values.preset === 'service') {
  const rows = simulate({
    seed: int(values.seed, DEFAULT_SIMULATION.seed),
    customers: int(values.customers, DEFAULT_SIMULATION.customers),
    merchants: int(values.merchants, DEFAULT_SIMULATION.merchants),
    days: int(values.days, DEFAULT_SIMULATION.days),
  });
  [csv, count, fraud] = [toCsv(rows), rows.length, rows.filter((r) => r.label === 1).length];
} else {
  console.error(`unknown --preset ${values.preset}: use service or handbook`);
  process.exit(2);
}
if (values.out) {
  writeFileSync(values.out, csv);
  console.error(`wrote ${count} transactions (${fraud} fraud, ${((100 * fraud) / count).toFixed(2)} %) to ${values.out}`);
} else {
  process.stdout.write(csv);
}
