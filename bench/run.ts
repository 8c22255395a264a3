// `npm run bench`: every benchmark in turn, each in its own process (so one's memory and JIT state
// cannot colour another's figures). `--quick` passes through (the only option every one of them
// takes). The last line is one JSON object holding each benchmark's own last-line JSON, keyed by
// benchmark.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { benchmarkCommandLine } from './harness.ts';

const { quick } = benchmarkCommandLine({
  name: 'bench',
  about: 'Every benchmark in turn (engine, http, rings, batch, listing, rules, webhooks, cases), each in its own process.',
  quick: "each benchmark's own --quick",
});

const benchmarks = ['engine', 'http', 'rings', 'batch', 'listing', 'rules', 'webhooks', 'cases'].filter((name) =>
  existsSync(new URL(`./${name}.ts`, import.meta.url)),
);
const results: Record<string, unknown> = {};
let failed = false;
for (const name of benchmarks) {
  console.log(`\n=== bench:${name} ===`);
  const run = spawnSync(process.execPath, [new URL(`./${name}.ts`, import.meta.url).pathname, ...(quick ? ['--quick'] : [])], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(run.stdout);
  const last = run.stdout.trim().split('\n').pop() ?? '';
  try {
    results[name] = JSON.parse(last);
  } catch {
    results[name] = { error: `exit ${run.status}, no JSON result` };
  }
  if (run.status !== 0) failed = true;
}
console.log(JSON.stringify({ benchmark: 'all', results }));
process.exit(failed ? 1 : 0);
