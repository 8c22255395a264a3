// `npm run simulate -- [--seed N] [--customers N] [--merchants N] [--days N] [--out FILE]`:
// writes the simulator's transactions as CSV (dataset format plus `scenario`) to FILE or stdout.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_SIMULATION, simulate, toCsv } from './simulate.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    customers: { type: 'string' },
    merchants: { type: 'string' },
    days: { type: 'string' },
    out: { type: 'string' },
  },
});
const int = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number.parseInt(v, 10));
const rows = simulate({
  seed: int(values.seed, DEFAULT_SIMULATION.seed),
  customers: int(values.customers, DEFAULT_SIMULATION.customers),
  merchants: int(values.merchants, DEFAULT_SIMULATION.merchants),
  days: int(values.days, DEFAULT_SIMULATION.days),
});
const csv = toCsv(rows);
if (values.out) {
  writeFileSync(values.out, csv);
  const fraud = rows.filter((r) => r.label === 1).length;
  console.error(`wrote ${rows.length} transactions (${fraud} fraud, ${((100 * fraud) / rows.length).toFixed(2)} %) to ${values.out}`);
} else {
  process.stdout.write(csv);
}
