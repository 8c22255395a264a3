// bench:rules, HTTP part: the v1 route's throughput with 20 active rules against none, on one real
// server (the compiled `dist/`, started as `npm start` starts it: embedded database, built-in
// model, DURABILITY=commit) and in the same run. Two organizations on it, made through the API
// as a customer makes them: one with the 100,000-value block list and the 20 rules of
// bench/rule-set.ts (created through the member API, status active), one with none. The same
// load as bench:http's API-key load (8 connections, the same request bodies, every request a new
// recorded transaction) runs on each in turn, in short slices, alternating which goes first, so
// drift, a noisy neighbour and the organizations' growing histories hit both alike; the ratio is
// the median of the slice pairs' ratios (one burst of another process's work moves one pair, not
// the figure), beside the ratio of all requests answered. The server's CPU time per request on
// each side (from /proc) says the same with less noise: on two shared cores, throughput also
// moves with the client's and the neighbours' share of the CPU.
// The slices (`slices`) and the block list's rules (`withBlockListRules`) serve the fields part
// too (rules-fields.ts), which compares three organizations the same way.

import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { SignIn } from '../test/support/processes.ts';
import { startServer } from './server-process.ts';
import { scoreRequests } from './requests.ts';
import { BLOCK_LIST, benchRules, blockListValues } from './rule-set.ts';

const CONNECTIONS = 8;

/** CPU seconds (user + system) of a /proc stat line (clock ticks of 10 ms). */
function statSeconds(path: string): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds the server process has used: in all, and on its main thread and its worker threads
 *  (the embedded database's, and any job's); the rest is V8's helpers (the collector, the
 *  compiler) and libuv's. */
function cpuSeconds(pid: number): { total: number; main: number; workers: number } {
  const out = { total: statSeconds(`/proc/${pid}/stat`), main: 0, workers: 0 };
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      if (name === 'MainThread') out.main += statSeconds(`/proc/${pid}/task/${task}/stat`);
      else if (name === 'WorkerThread') out.workers += statSeconds(`/proc/${pid}/task/${task}/stat`);
    } catch {
      // A thread that exited meanwhile: its time is in the process's total.
    }
  }
  return out;
}

export interface Side {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  server_latency_p50_ms: number;
  /** The server process's CPU time per request answered. */
  server_cpu_us_per_request: number;
  /** The same on its main thread, its worker threads (the embedded database's) and the rest (V8's
   *  collector and compiler threads, libuv's). */
  server_cpu_us_by_thread: { main: number; workers: number; other: number };
  non_2xx: number;
}

export interface HttpFigures {
  seconds_per_slice: number;
  pairs: number;
  no_rules: Side;
  rules_20: Side & { matched_share: number };
  /** Median of the pairs' ratios (with rules / without). */
  ratio: number;
  /** All requests with rules / all without (the same time each). */
  ratio_of_totals: number;
  pair_ratios: number[];
  /** Server CPU per request, without rules / with (what throughput would be if the server alone
   *  decided it). */
  cpu_ratio: number;
}

export const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1]! : Number.NaN;
};

export const round3 = (x: number) => Math.round(x * 1000) / 1000;

export async function call(url: string, method: string, headers: Record<string, string>, body: unknown, expect: number): Promise<unknown> {
  const res = await fetch(url, { method, headers, body: JSON.stringify(body) });
  if (res.status !== expect) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Gives the organization at `org` (`/api/organizations/{id}`) the 100,000-value block list and the
 *  20 rules of bench/rule-set.ts, active. */
export async function withBlockListRules(org: string, member: Record<string, string>): Promise<void> {
  await call(`${org}/lists`, 'POST', member, { name: BLOCK_LIST, kind: 'customer_id', description: 'Chargebacks' }, 201);
  const values = blockListValues();
  for (let k = 0; k < values.length; k += 10_000)
    await call(`${org}/lists/${BLOCK_LIST}/items`, 'POST', member, { values: values.slice(k, k + 10_000), reason: 'chargeback' }, 200);
  for (const r of benchRules(20)) await call(`${org}/rules`, 'POST', member, { ...r, status: 'active' }, 201);
}

/** One organization under the load: its API key, its request bodies (each a new transaction) and,
 *  during the measured slices, what to note of each answer. */
export interface LoadSide {
  key: string;
  body: () => string;
  noted?: (body: string) => void;
}

/** One slice of load on one side. */
export interface Slice {
  rps: number;
  requests: number;
  cpu: number;
  cpuMain: number;
  cpuWorkers: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/**
 * The same load on each side in turn, `rounds` times, `seconds` a slice, the order rotated each
 * round (with two sides: alternated), after 2,000 requests on each to load its history and compile
 * its code paths. Returns each side's slices (by round) and the server's own `latency_ms` of each
 * answer.
 */
export async function slices(
  server: ChildProcess,
  base: string,
  sides: readonly LoadSide[],
  rounds: number,
  seconds: number,
): Promise<{ slices: Slice[][]; latency: number[][] }> {
  const LATENCY = /"latency_ms":([0-9.eE+-]+)/;
  const latency = sides.map(() => [] as number[]);
  const load = async (which: number, duration: number, keep: boolean): Promise<Slice> => {
    const side = sides[which]!;
    const cpuBefore = cpuSeconds(server.pid!);
    const r = await autocannon({
      url: `${base}/api/v1/risk/score`,
      method: 'POST',
      connections: CONNECTIONS,
      ...(duration > 0 ? { duration } : { amount: 2000 }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${side.key}` },
      requests: [
        {
          setupRequest: (req) => ({ ...req, body: side.body() }),
          // The same client work per response on every side: one search for latency_ms (and
          // whatever the side notes: a match, on a side with rules).
          onResponse: (status: number, body: string) => {
            const m = LATENCY.exec(body);
            if (!keep || status !== 200 || !m) return;
            latency[which]!.push(Number(m[1]));
            side.noted?.(body);
          },
        },
      ],
    });
    const cpu = cpuSeconds(server.pid!);
    return {
      rps: r.requests.total / Math.max(1, duration),
      requests: r.requests.total,
      cpu: cpu.total - cpuBefore.total,
      cpuMain: cpu.main - cpuBefore.main,
      cpuWorkers: cpu.workers - cpuBefore.workers,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx + r.errors,
    };
  };
  for (let s = 0; s < sides.length; s++) await load(s, 0, false);
  const out = sides.map(() => [] as Slice[]);
  for (let i = 0; i < rounds; i++)
    for (let j = 0; j < sides.length; j++) {
      const s = (i + j) % sides.length;
      out[s]!.push(await load(s, seconds, true));
    }
  return { slices: out, latency };
}

/** All requests of a side's slices per second of load. */
export const totalRate = (list: readonly Slice[], seconds: number) => list.reduce((s, r) => s + r.requests, 0) / (list.length * seconds);

/** A side's figures over its slices. */
export function sideFigures(list: readonly Slice[], latency: readonly number[], seconds: number): Side {
  const requests = Math.max(
    1,
    list.reduce((s, r) => s + r.requests, 0),
  );
  const perRequest = (cpu: (r: Slice) => number) => Math.round((list.reduce((s, r) => s + cpu(r), 0) / requests) * 1e6);
  const main = perRequest((r) => r.cpuMain);
  const workers = perRequest((r) => r.cpuWorkers);
  return {
    rps: Math.round(totalRate(list, seconds)),
    p50_ms: median(list.map((r) => r.p50)),
    p99_ms: median(list.map((r) => r.p99)),
    server_latency_p50_ms: median(latency),
    server_cpu_us_per_request: perRequest((r) => r.cpu),
    server_cpu_us_by_thread: { main, workers, other: perRequest((r) => r.cpu) - main - workers },
    non_2xx: list.reduce((s, r) => s + r.non2xx, 0),
  };
}

/** `whileStarting` runs once the server is spawned, before it is ready (work of the caller's that
 *  would otherwise wait for the start). */
export async function measureHttp(o: { quick: boolean; log: (line: string) => void; whileStarting?: () => void }): Promise<HttpFigures> {
  const seconds = 2;
  const pairs = o.quick ? 3 : 16;
  const signIn = await SignIn.start();
  const starting = startServer({ SCORE_RATE_PER_MINUTE: '100000000', ...signIn.env });
  o.whileStarting?.();
  const { child: server, url: base } = await starting;
  try {
    const withRules = await signIn.organization(base, 'rules');
    const without = await signIn.organization(base, 'no-rules');
    await withBlockListRules(`${base}/api/organizations/${withRules.id}`, withRules.member);

    // Each organization gets the same sequence of request bodies.
    let matched = 0;
    let answered = 0;
    const run = await slices(
      server,
      base,
      [
        {
          key: withRules.secret,
          body: scoreRequests().newTransaction,
          noted: (body) => {
            answered++;
            if (body.includes('"rules":[{')) matched++;
          },
        },
        { key: without.secret, body: scoreRequests().newTransaction },
      ],
      pairs,
      seconds,
    );
    const [withSlices, withoutSlices] = run.slices as [Slice[], Slice[]];
    const pairRatios = withSlices.map((r, i) => round3(r.rps / withoutSlices[i]!.rps));
    o.log(`pairs (20 rules / none): ${pairRatios.join(' ')}`);
    const none = sideFigures(withoutSlices, run.latency[1]!, seconds);
    const rules = sideFigures(withSlices, run.latency[0]!, seconds);
    const figures: HttpFigures = {
      seconds_per_slice: seconds,
      pairs,
      no_rules: none,
      rules_20: { ...rules, matched_share: round3(matched / Math.max(1, answered)) },
      ratio: median(pairRatios),
      ratio_of_totals: round3(totalRate(withSlices, seconds) / totalRate(withoutSlices, seconds)),
      pair_ratios: pairRatios,
      cpu_ratio: round3(none.server_cpu_us_per_request / rules.server_cpu_us_per_request),
    };
    o.log(
      `POST /api/v1/risk/score, ${CONNECTIONS} connections, ${pairs} × ${seconds} s a side: 20 rules ${figures.rules_20.rps} req/s (server latency_ms p50 ${figures.rules_20.server_latency_p50_ms}), no rules ${figures.no_rules.rps} req/s (${figures.no_rules.server_latency_p50_ms}): ratio ${figures.ratio} (median of pairs), ${figures.ratio_of_totals} (totals); server CPU ${rules.server_cpu_us_per_request} µs against ${none.server_cpu_us_per_request} µs a request (${figures.cpu_ratio})`,
    );
    return figures;
  } finally {
    server.kill('SIGTERM');
    await signIn.close();
  }
}
