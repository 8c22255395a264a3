// `npm run bench:http -- --processes 2 [--quick]` (needs DATABASE_URL: a PostgreSQL server on which
// the benchmark may create and drop databases): scoring with an organization's API key, every
// request a new recorded transaction, in three set-ups in the same run, each with a database of its
// own: one process with DURABILITY=commit, one with write_behind (the baseline), and two processes
// sharing one database (commit, each loaded by half the connections). Each load reports throughput
// and client p50/p99, and each process its CPU time per request (/proc): with the client on the
// same few cores, CPU per request is what shows how the processes would scale. During the
// two-process load a probe measures the replication lag: a transaction scored on one process, then
// asked for on the other until its evidence shows it (an upper bound). BENCH_CONNECTIONS (32 by
// default) keeps enough requests in flight that each durability is bound by what it can serve, not
// by a commit's round trip. Prints a table, then one JSON object.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { dropDatabase } from '../test/support/server.ts';
import { quick } from './harness.ts';
import { startServer } from './server-process.ts';
import { SignIn } from '../test/support/processes.ts';
import { scoreRequests } from './requests.ts';

const DURATION = quick ? 4 : 20;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('bench:http --processes 2 runs on PostgreSQL: set DATABASE_URL to a server where this role may CREATE DATABASE.\n');
  process.exit(2);
}

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN;
}

/** CPU seconds (user + system) a process has used. */
const TICKS = 100;
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

// --- databases and servers ----------------------------------------------------------------------
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
const databases: string[] = [];
async function database(): Promise<string> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  databases.push(name);
  const u = new URL(adminUrl!);
  u.pathname = `/${name}`;
  return u.toString();
}

const signIn = await SignIn.start();
// What the run started, stopped and dropped at its end, or when it fails part way (a failure must
// not leave server processes or benchmark databases behind).
const started: Awaited<ReturnType<typeof startServer>>[] = [];
let cleanedUp = false;
async function cleanUp(): Promise<void> {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const s of started) s.child.kill('SIGTERM');
  await Promise.all(started.map((s) => new Promise((resolve) => (s.child.exitCode !== null ? resolve(null) : s.child.once('exit', resolve)))));
  await signIn.close();
  for (const name of databases) await dropDatabase(admin, name);
  await admin.end();
}
process.on('uncaughtException', (e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  if (!cleanedUp) void cleanUp().finally(() => process.exit(1));
});
const auth = { SCORE_RATE_PER_MINUTE: '100000000', ...signIn.env };
process.stderr.write('starting four server processes on PostgreSQL…\n');
const [commitDb, writeBehindDb, sharedDb] = [await database(), await database(), await database()];
// The first of the pair applies the migrations before the second starts.
const server = async (env: Record<string, string>) => {
  const s = await startServer(env);
  started.push(s);
  return s;
};
const [single, writeBehind, pairA] = await Promise.all([
  server({ ...auth, DATABASE_URL: commitDb, DURABILITY: 'commit' }),
  server({ ...auth, DATABASE_URL: writeBehindDb, DURABILITY: 'write_behind' }),
  server({ ...auth, DATABASE_URL: sharedDb, DURABILITY: 'commit' }),
]);
const pairB = await server({ ...auth, DATABASE_URL: sharedDb, DURABILITY: 'commit' });
const servers = [single, writeBehind, pairA, pairB];

// An organization and its key on each set-up, made through the API as a customer makes them.
const singleKey = (await signIn.organization(single.url, 'bench')).secret;
const writeBehindKey = (await signIn.organization(writeBehind.url, 'bench')).secret;
const sharedKey = (await signIn.organization(pairA.url, 'bench')).secret;

// --- requests -------------------------------------------------------------------------------------
const { newTransaction } = scoreRequests();

interface Load {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
}

function load(base: string, key: string, connections: number, duration: number): Promise<Load> {
  return autocannon({
    url: `${base}/api/v1/risk/score`,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
  }).then((r) => ({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx + r.errors }));
}

/** A load on some processes at once, with each process's CPU time per request answered. */
async function measured(
  title: string,
  targets: { server: (typeof servers)[number]; key: string }[],
): Promise<{ total: Load & { cpu_ms_per_request: number }; each: (Load & { cpu_ms_per_request: number })[] }> {
  for (const t of targets) await load(t.server.url, t.key, 2, 2);
  const before = targets.map((t) => cpuSeconds(t.server.child.pid!));
  const results = await Promise.all(targets.map((t) => load(t.server.url, t.key, CONNECTIONS / targets.length, DURATION)));
  const each = results.map((r, i) => ({
    ...r,
    cpu_ms_per_request: ((cpuSeconds(targets[i]!.server.child.pid!) - before[i]!) * 1000) / Math.max(1, r.requests),
  }));
  const requests = each.reduce((s, r) => s + r.requests, 0);
  const total = {
    rps: each.reduce((s, r) => s + r.rps, 0),
    p50: Math.max(...each.map((r) => r.p50)),
    p99: Math.max(...each.map((r) => r.p99)),
    requests,
    non2xx: each.reduce((s, r) => s + r.non2xx, 0),
    cpu_ms_per_request: each.reduce((s, r) => s + r.cpu_ms_per_request * r.requests, 0) / Math.max(1, requests),
  };
  process.stderr.write(
    `${title}: ${Math.round(total.rps)} req/s, p50 ${total.p50} ms, p99 ${total.p99} ms, CPU ${each.map((r) => r.cpu_ms_per_request.toFixed(3)).join(' + ')} ms per request, errors/non-2xx ${total.non2xx}\n`,
  );
  return { total, each };
}

/** Scores on `from`, then asks `to` until its evidence shows the transaction: ms. */
let probes = 0;
async function lagOnce(from: string, to: string): Promise<number> {
  const n = ++probes;
  const customer = `lag-${n}`;
  const send = (base: string, id: string, merchant: string) =>
    fetch(`${base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${sharedKey}` },
      body: JSON.stringify({ transaction_id: id, amount: 12.5, customer_id: customer, merchant_id: merchant }),
    });
  const answer = async (base: string, id: string, merchant: string) => {
    const res = await send(base, id, merchant);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`the lag probe's score on ${base} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as { graph_evidence: Record<string, { transaction_id: string }[]> };
  };
  await answer(from, `lag-${n}`, 'lag-m');
  const answered = performance.now();
  for (let attempt = 0; ; attempt++) {
    const body = await answer(to, `lag-${n}-${attempt}`, `lag-m-${attempt}`);
    if (body.graph_evidence[customer]?.some((e) => e.transaction_id === `lag-${n}`)) return performance.now() - answered;
    if (attempt > 5_000) throw new Error('the other process never saw the transaction');
  }
}

const oneCommit = await measured('1 process, DURABILITY=commit', [{ server: single, key: singleKey }]);
const oneWriteBehind = await measured('1 process, DURABILITY=write_behind', [{ server: writeBehind, key: writeBehindKey }]);
let probing = true;
const lags: number[] = [];
const probe = (async () => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  for (let i = 0; probing; i++) {
    lags.push(i % 2 ? await lagOnce(pairA.url, pairB.url) : await lagOnce(pairB.url, pairA.url));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
})();
const two = await measured('2 processes, one database, DURABILITY=commit', [
  { server: pairA, key: sharedKey },
  { server: pairB, key: sharedKey },
]);
probing = false;
await probe;

await cleanUp();

const lagP50 = percentile(lags, 50);
const lagP99 = percentile(lags, 99);
const commitCost = oneCommit.total.rps / oneWriteBehind.total.rps;
const scaling = two.total.rps / oneCommit.total.rps;
const row = (name: string, l: Load & { cpu_ms_per_request: number }, cpu: string) => `| ${name} | ${Math.round(l.rps)} | ${l.p50} | ${l.p99} | ${cpu} |`;
console.log('');
console.log(`| API-key scoring on PostgreSQL (${CONNECTIONS} connections, ${DURATION} s, loopback) | req/s | p50 ms | p99 ms | server CPU ms per request |`);
console.log('|---|---|---|---|---|');
console.log(row('1 process, DURABILITY=write_behind', oneWriteBehind.total, oneWriteBehind.total.cpu_ms_per_request.toFixed(3)));
console.log(row('1 process, DURABILITY=commit', oneCommit.total, oneCommit.total.cpu_ms_per_request.toFixed(3)));
console.log(row('2 processes, one database, DURABILITY=commit', two.total, two.each.map((r) => r.cpu_ms_per_request.toFixed(3)).join(' / ')));
console.log('');
console.log(`commit / write_behind throughput: ${(commitCost * 100).toFixed(1)} % (goal ≥ 75 %)`);
console.log(`2 processes / 1 process throughput: ${scaling.toFixed(2)}× (client and servers share 2 cores: see CPU per request)`);
console.log(
  `replication lag under the two-process load, over ${lags.length} probes: p50 ${lagP50.toFixed(1)} ms, p99 ${lagP99.toFixed(1)} ms (goal p99 < 100 ms)`,
);
console.log(
  JSON.stringify({
    benchmark: 'http_processes',
    quick,
    duration_s: DURATION,
    connections: CONNECTIONS,
    one_process_write_behind: oneWriteBehind.total,
    one_process_commit: oneCommit.total,
    two_processes_commit: { ...two.total, per_process: two.each },
    ratio_commit_to_write_behind: Math.round(commitCost * 1000) / 1000,
    ratio_two_to_one_process: Math.round(scaling * 1000) / 1000,
    lag_ms: { p50: Math.round(lagP50 * 10) / 10, p99: Math.round(lagP99 * 10) / 10, probes: lags.length },
    goals: { lag_p99_under_100ms: lagP99 < 100, commit_within_25_percent: commitCost >= 0.75 },
  }),
);
process.exit(0);
