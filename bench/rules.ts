// `npm run bench:rules [-- --quick]`: what an organization's rules cost, four ways, each against
// its baseline in the same run.
// - The rules stage: Scorer.scoreToRecord with 20 and with 100 active rules against the same
//   requests without rules, in-process on the example history (rules-scorer.ts). Goal: 20 rules
//   add at most 20 µs a request.
// - The v1 route: a real server's `POST /api/v1/risk/score` for an organization with 20 rules
//   against one with none, same server, alternating (rules-http.ts). Goal: throughput down by at
//   most 10 %.
// - The v1 route with an organization's own fields: 10 declared (3 keys) sent on every request and
//   20 rules reading them, against an organization with no fields and no rules, and one with the 20
//   ordinary rules, same server, rotating (rules-fields.ts). Goal: at least 90 % of the throughput
//   without fields.
// - A backtest of one rule over 1,000,000 logged decisions (200,000 with --quick) through the real
//   job handler, against reading the same pages alone (rules-backtest.ts). Goal: at most 20 s,
//   memory flat in the number of decisions.
// The rules (bench/rule-set.ts) are realistic expressions, a 100,000-value block list among them.
// Last line: one JSON object.

import { oneOf } from '../src/command-line.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { exampleScoring, measureScorer, type ExampleScoring, type ScorerFigures } from './rules-scorer.ts';
import { measureHttp, type HttpFigures } from './rules-http.ts';
import { measureFields, type FieldsFigures } from './rules-fields.ts';
import { measureBacktest, type BacktestFigures } from './rules-backtest.ts';

const options = benchmarkCommandLine({
  name: 'bench:rules',
  about:
    "The rules stage's cost per request (20 and 100 rules), the v1 route's throughput with 20 rules and with 10 fields of the organization's own and 20 rules reading them, and a backtest over a million logged decisions.",
  quick:
    'fewer samples, 3 rounds of 2-s loads instead of 16 (http and fields), and a backtest over 200,000 logged decisions instead of 1,000,000 (the one rule only, one run instead of two)',
  options: {
    only: oneOf(['scorer', 'http', 'fields', 'backtest'], 'run only this part (default: all four)'),
  },
  notes: [
    'The HTTP and fields parts start the compiled server (dist/, `npm run build:server`), as `npm start` does.',
    "DATABASE_URL set: the backtest part runs on that PostgreSQL server (a schema of its own, dropped at the end) and the fields part's server on a database of its own there; unset: the embedded database.",
  ],
});

const log = (line: string) => process.stderr.write(`${line}\n`);
const runs = (part: string) => options.only === undefined || options.only === part;
const started = performance.now();

let scorer: ScorerFigures | undefined;
let http: HttpFigures | undefined;
let fields: FieldsFigures | undefined;
let backtest: BacktestFigures | undefined;
// The server part first, while nothing else runs in this process; the example history is built
// while the server starts.
let example: Promise<ExampleScoring> | undefined;
const needsExample = runs('scorer') || runs('backtest');
if (runs('http')) {
  log('--- the v1 route, 20 rules against none');
  http = await measureHttp({ quick, log, whileStarting: () => (example = needsExample ? exampleScoring() : undefined) });
}
if (runs('fields')) {
  log('--- the v1 route, 10 fields and 20 rules reading them against none');
  fields = await measureFields({ quick, log, databaseUrl: process.env.DATABASE_URL || undefined });
}
if (needsExample) example ??= exampleScoring();
const scoring = await example;
if (runs('scorer')) {
  log('--- the rules stage in the scorer');
  scorer = await measureScorer({ quick, log, example: scoring! });
}
if (runs('backtest')) {
  log('--- a backtest');
  const bundle = scoring!.scorer.bundle;
  backtest = await measureBacktest({
    quick,
    log,
    example: scoring!,
    featureNames: bundle.channels.map((c) => c.features),
    labelDelay: bundle.file.training.label_delay_ms,
  });
}

console.log('');
if (scorer) {
  console.log('| Scorer.scoreToRecord, explanations on, example history | µs a request (median) | added by the rules |');
  console.log('|---|---|---|');
  console.log(`| no rules | ${scorer.no_rules_us} | |`);
  console.log(`| 20 active rules | ${scorer.rules_20_us} | ${scorer.added_20_us} µs (${scorer.ratio_20}×); stage ${scorer.stage_20_us} µs |`);
  console.log(`| 100 active rules | ${scorer.rules_100_us} | ${scorer.added_100_us} µs (${scorer.ratio_100}×); stage ${scorer.stage_100_us} µs |`);
  console.log(`20 rules add ${scorer.added_20_us} µs a request (goal ≤ 20 µs)\n`);
}
if (http) {
  console.log(
    `| POST /api/v1/risk/score, 8 connections, ${http.pairs} × ${http.seconds_per_slice} s a side | req/s | p50 / p99 ms | server latency_ms p50 | server CPU µs a request |`,
  );
  console.log('|---|---|---|---|---|');
  console.log(
    `| no rules | ${http.no_rules.rps} | ${http.no_rules.p50_ms} / ${http.no_rules.p99_ms} | ${http.no_rules.server_latency_p50_ms} | ${http.no_rules.server_cpu_us_per_request} |`,
  );
  console.log(
    `| 20 active rules | ${http.rules_20.rps} | ${http.rules_20.p50_ms} / ${http.rules_20.p99_ms} | ${http.rules_20.server_latency_p50_ms} | ${http.rules_20.server_cpu_us_per_request} |`,
  );
  console.log(`throughput with 20 rules: ${http.ratio} of without (median of pairs; totals ${http.ratio_of_totals}; CPU ${http.cpu_ratio}) (goal ≥ 0.9)\n`);
}
if (fields) {
  console.log(
    `| POST /api/v1/risk/score, 8 connections, ${fields.rounds} rounds × ${fields.seconds_per_slice} s a side | req/s | p50 / p99 ms | server latency_ms p50 | server CPU µs a request | of it: main thread / database thread / the rest |`,
  );
  console.log('|---|---|---|---|---|---|');
  const row = (name: string, s: FieldsFigures['none']) =>
    console.log(
      `| ${name} | ${s.rps} | ${s.p50_ms} / ${s.p99_ms} | ${s.server_latency_p50_ms} | ${s.server_cpu_us_per_request} | ${s.server_cpu_us_by_thread.main} / ${s.server_cpu_us_by_thread.workers} / ${s.server_cpu_us_by_thread.other} |`,
    );
  row('no fields, no rules (baseline)', fields.none);
  row('20 ordinary rules, no fields', fields.rules_20);
  row(`10 fields sent (3 keys, +${fields.fields_10.request_bytes_added} bytes a request), 20 rules reading them`, fields.fields_10);
  console.log(
    `throughput with fields: ${fields.ratio} of without (median of rounds; totals ${fields.ratio_of_totals}; CPU ${fields.cpu_ratio}) (goal ≥ 0.9); against 20 ordinary rules ${fields.ratio_to_rules} (CPU ${fields.cpu_ratio_to_rules}); 20 ordinary rules against none ${fields.rules_ratio}; ${Math.round(fields.fields_10.matched_share * 1000) / 10} % of requests with fields matched a rule\n`,
  );
}
if (backtest) {
  console.log(
    `| Backtest, ${backtest.decisions.toLocaleString('en')} logged decisions, ${backtest.database} | job s (each run) | page reads alone s | job ÷ reads | rows/s (slowest run) |`,
  );
  console.log('|---|---|---|---|---|');
  for (const r of backtest.runs)
    console.log(
      `| \`${r.expression}\` | ${r.run_seconds.join(', ')} | ${r.read_runs_seconds.join(', ')} | ${r.ratio}× | ${r.rows_per_second.toLocaleString('en')} |`,
    );
  const m = backtest.memory;
  console.log(
    `memory: V8 heap after a full collection ${m.heap_mb_at_quarter} MB at ${m.quarter_rows.toLocaleString('en')} rows, ${m.heap_mb_at_end} MB at ${backtest.decisions.toLocaleString('en')}; resident ${m.rss_mb_at_quarter} → ${m.rss_mb_at_end} MB (peak ${m.peak_rss_mb}, ${m.rss_mb_before} before the job)`,
  );
  console.log(`backtest: ${backtest.runs[0]!.seconds} s for ${backtest.decisions.toLocaleString('en')}, the slowest run (goal ≤ 20 s for 1,000,000)\n`);
}
const goals = {
  ...(scorer ? { rules_20_add_at_most_20us: scorer.added_20_us <= 20 } : {}),
  ...(http ? { v1_throughput_with_20_rules_at_least_0_9: http.ratio >= 0.9 } : {}),
  ...(fields ? { v1_throughput_with_10_fields_at_least_0_9: fields.ratio >= 0.9 } : {}),
  ...(backtest
    ? {
        backtest_at_most_20s: backtest.runs[0]!.seconds <= (20 * backtest.decisions) / 1_000_000,
        backtest_heap_flat: backtest.memory.heap_mb_at_end <= backtest.memory.heap_mb_at_quarter * 1.1,
      }
    : {}),
};
console.log(`${Math.round((performance.now() - started) / 1000)} s in all`);
console.log(JSON.stringify({ benchmark: 'rules', quick, ...(options.only ? { only: options.only } : {}), scorer, http, fields, backtest, goals }));
process.exit(0);
