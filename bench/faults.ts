// `npm run bench:faults [-- --quick]`: the database's faults at full length, under v1 traffic from
// four lanes on two server processes that reach a PostgreSQL server of their own through a fault
// proxy (test/support/fault-drill.ts). First the baseline: the same traffic with nothing wrong.
// Then 20 restarts of PostgreSQL (`pg_ctl stop -m fast` and `-m immediate` in turn, 2 s down, 2 s
// up), a blackhole of 30 s (nothing forwarded, nothing closed), and a reset storm (every connection
// reset each second for a minute). Then every refused transaction is sent again and the decision
// log is audited. Goals: no process exits; no acknowledged score missing or stored twice; during the
// blackhole every request answered within the scoring deadline (2 s) + 1 s and the first 200 within
// 2 s after forwarding resumes; during the storm the answered requests' p99 within the deadline.
// Prints a table, then one JSON object. Needs PostgreSQL's server programs (initdb, pg_ctl).

import { benchmarkCommandLine, quick } from './harness.ts';
import { FaultDrill, percentile, sleep, type Answer } from '../test/support/fault-drill.ts';

benchmarkCommandLine({
  name: 'bench:faults',
  about:
    'PostgreSQL restarts, a blackhole and a reset storm under v1 traffic on two processes: exits, lost or doubled writes, and answer times against a fault-free baseline.',
  quick: '4 restarts, a blackhole of 8 s and a reset storm of 10 s, after a 5 s baseline',
});

const DEADLINE_MS = 2_000;
const BASELINE_S = quick ? 5 : 15;
const RESTARTS = quick ? 4 : 20;
const BLACKHOLE_S = quick ? 8 : 30;
const STORM_S = quick ? 10 : 60;

const drill = await FaultDrill.start();
const traffic = drill.traffic(4);
const sent = (from: number, to: number): Answer[] => [...traffic.answers.values()].flat().filter((x) => x.sentAt >= from && x.sentAt < to);
const okMs = (xs: Answer[]) => xs.filter((x) => x.status === 200).map((x) => x.ms);
const round = (x: number) => Math.round(x);

let result: Record<string, unknown>;
try {
  await sleep(1_000);
  const baseStart = performance.now();
  await sleep(BASELINE_S * 1000);
  const baseline = sent(baseStart, performance.now());
  const baselineP99 = percentile(okMs(baseline), 99);
  const baselineRate = baseline.length / BASELINE_S;

  const restartStart = performance.now();
  for (let k = 0; k < RESTARTS; k++) {
    await drill.pg.stop(k % 2 === 0 ? 'fast' : 'immediate');
    await sleep(2_000);
    await drill.pg.start();
    await sleep(2_000);
  }
  const restarts = sent(restartStart, performance.now());

  const holeStart = performance.now();
  drill.proxy.blackhole();
  await sleep(BLACKHOLE_S * 1000);
  const holeEnd = performance.now();
  drill.proxy.resume();
  await sleep(5_000);
  const hole = sent(holeStart, holeEnd);
  const firstOk =
    Math.min(
      ...[...traffic.answers.values()]
        .flat()
        .filter((x) => x.status === 200 && x.at >= holeEnd)
        .map((x) => x.at),
    ) - holeEnd;

  const stormStart = performance.now();
  const storm = setInterval(() => drill.proxy.reset(), 1_000);
  await sleep(STORM_S * 1000);
  clearInterval(storm);
  const stormEnd = performance.now();
  await sleep(3_000);
  const stormed = sent(stormStart, stormEnd);
  const stormP99 = percentile(okMs(stormed), 99);

  await traffic.stop();
  const exits = drill.exits();
  const unsettled = await drill.settle(traffic.answers);
  const audit = await drill.audit(traffic.answers);
  const slowestInHole = Math.max(0, ...hole.map((x) => x.ms));

  console.log('');
  console.log('| phase | requests | answered 200 | p99 of 200s ms | slowest ms |');
  console.log('|---|---|---|---|---|');
  for (const [name, xs] of [
    [`baseline, ${BASELINE_S} s`, baseline],
    [`${RESTARTS} restarts`, restarts],
    [`blackhole, ${BLACKHOLE_S} s`, hole],
    [`reset storm, ${STORM_S} s`, stormed],
  ] as const) {
    console.log(`| ${name} | ${xs.length} | ${okMs(xs).length} | ${round(percentile(okMs(xs), 99))} | ${round(Math.max(0, ...xs.map((x) => x.ms)))} |`);
  }
  console.log(
    `process exits ${exits.length}; acknowledged and missing ${audit.missing.length}; stored twice ${audit.duplicates.length}; not answered 200 when sent again ${unsettled.length}`,
  );
  console.log(
    `blackhole: slowest answer ${round(slowestInHole)} ms (goal ≤ ${DEADLINE_MS + 1000}), first 200 ${round(firstOk)} ms after forwarding resumed (goal ≤ 2000)`,
  );
  console.log(
    `reset storm: p99 of answered requests ${round(stormP99)} ms, ${(stormP99 / Math.max(1, baselineP99)).toFixed(2)}× the baseline's ${round(baselineP99)} ms (goal ≤ ${DEADLINE_MS} ms)`,
  );
  result = {
    benchmark: 'faults',
    quick,
    baseline: { requests_per_s: round(baselineRate), p99_ms: round(baselineP99) },
    restarts: { count: RESTARTS, requests: restarts.length, answered_200: okMs(restarts).length },
    blackhole: { seconds: BLACKHOLE_S, requests: hole.length, slowest_ms: round(slowestInHole), first_200_after_ms: round(firstOk) },
    reset_storm: {
      seconds: STORM_S,
      requests: stormed.length,
      answered_200: okMs(stormed).length,
      p99_ms: round(stormP99),
      p99_ratio_to_baseline: Math.round((stormP99 / Math.max(1, baselineP99)) * 100) / 100,
    },
    process_exits: exits.length,
    acknowledged_missing: audit.missing.length,
    stored_twice: audit.duplicates.length,
    transactions: traffic.answers.size,
    goals: {
      no_process_exit: exits.length === 0,
      no_acknowledged_write_lost: audit.missing.length === 0 && unsettled.length === 0,
      no_duplicate: audit.duplicates.length === 0,
      blackhole_answered_within_deadline: slowestInHole <= DEADLINE_MS + 1000,
      blackhole_first_200_within_2s: firstOk <= 2000,
      storm_p99_within_deadline: stormP99 <= DEADLINE_MS,
    },
  };
  for (const line of exits) console.error(line);
} finally {
  await traffic.stop();
  await drill.stop();
}
console.log(JSON.stringify(result));
process.exit(0);
