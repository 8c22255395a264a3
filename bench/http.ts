// `npm run bench:http [-- --quick]`: the HTTP service under load from a second process on loopback.
// Starts the real server as `npm start` runs it (compiled, embedded database, built-in model,
// scoring rate limit raised) and a bare Fastify JSON route (trivial-server.ts) as the ceiling, each
// in its own process, and drives them with autocannon one after the other in the same run, with a
// third load between them: the bare server sending a real score response as it is (what the
// response alone costs). Reports requests per second, client p50/p99 and the server's own
// `latency_ms`. A fourth load scores with an organization's API key (every request a new recorded
// transaction; organization and key made through the API), on the default server (commit) and on a
// second one with DURABILITY=write_behind. The full run then has a second organization import the
// built-in example while the first records scores at a fixed rate (against the same rate alone: does
// an import hold up the others' commits?). Ends with the server's resident memory, what the
// organization's history added to it per 100,000 transactions, and one JSON line.

import { spawn } from 'node:child_process';
import type { IncomingHttpHeaders } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { oneOf, wholeNumber } from '../src/command-line.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { memoryMb, root, startServer, waitFor } from './server-process.ts';
import { tempDir } from '../test/support/temp.ts';
import { freshDatabase } from '../test/support/server.ts';
import { SignIn } from '../test/support/processes.ts';
import { scoreRequests } from './requests.ts';
import { fixedRate, type Load } from './fixed-rate.ts';

const options = benchmarkCommandLine({
  name: 'bench:http',
  about: 'The real server under load over loopback, against a bare Fastify route; then API-key scoring, commit and write-behind.',
  quick: '5 s a load instead of 20 s (with --processes 2: 4 s)',
  options: {
    processes: oneOf(['2'], 'the PostgreSQL set-ups instead: one server process against two (needs DATABASE_URL)'),
    soak: wholeNumber(
      "the run at half the recorded route's throughput lasts this many minutes (a memory soak; resident memory sampled every 30 s) instead of one load's duration",
      { min: 1, max: 120, value: 'MINUTES' },
    ),
  },
  notes: [
    'DATABASE_URL (a PostgreSQL server on which this role may create and drop databases): the API-key load and its profile run there too, on a fresh database. With --processes 2: the PostgreSQL set-ups (DATABASE_URL needed); BENCH_CONNECTIONS (default 32).',
  ],
});

// `--processes 2`: the PostgreSQL set-ups (one process and two, commit and write-behind, the
// replication lag) instead; see http-processes.ts, which exits when done.
if (options.processes !== undefined) await import('./http-processes.ts');

const DURATION = quick ? 5 : 20;
const CONNECTIONS = 8;
/** Recorded scores a second while an import runs (the full run): well within what the route serves. */
const IMPORT_RATE = 100;

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

// --- start both servers -----------------------------------------------------------------------
process.stderr.write(`starting the service…\n`);
// Members sign in through a stand-in identity provider on loopback.
const signIn = await SignIn.start();
// The request log at its default level (info), as `npm start` runs: its cost is part of what is
// measured (standard output goes nowhere, so only the server's own work counts).
const serverEnv = { SCORE_RATE_PER_MINUTE: '100000000', LOG_LEVEL: 'info', ...signIn.env };
// The service as configured by default (DURABILITY=commit), and beside it one that writes behind,
// for the API-key load only.
const [{ child: server, url: base, startup }, { child: writeBehindServer, url: writeBehindBase }] = await Promise.all([
  startServer(serverEnv),
  startServer({ ...serverEnv, DURABILITY: 'write_behind' }),
]);
const rssAfterStart = memoryMb(server.pid!);

// An organization and its API key on each, made as a customer makes them.
const { member, secret: apiKey } = await signIn.organization(base, 'bench');
const writeBehindKey = (await signIn.organization(writeBehindBase, 'bench')).secret;

// --- requests ---------------------------------------------------------------------------------
const { body, newTransaction, recorded } = scoreRequests();

// A real score response of median size, which the bare server sends back as it is (`/canned`).
const samples: string[] = [];
for (let i = 0; i < 21; i++)
  samples.push(await (await fetch(`${base}/api/risk/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() })).text());
const cannedText = samples.sort((a, b) => a.length - b.length)[10]!;
const cannedFile = join(tempDir('bench-canned-'), 'response.json');
writeFileSync(cannedFile, cannedText);
const trivial = spawn(process.execPath, [join(root, 'bench/trivial-server.ts')], {
  cwd: root,
  env: { ...process.env, CANNED_FILE: cannedFile },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const trivialPort = Number((await waitFor(trivial, /port (\d+)/, 'stdout'))[1]);

let serverLatency: number[] = [];
const LATENCY = /"latency_ms":([0-9.eE+-]+)/;
const STAGES = /"stages":(\[[^\]]*\])/;

/** Where a recorded score's time went, per response: the Server-Timing phases (auth, validate,
 *  prepare, score, serialize, commit, total) and the answer's own scoring stages. */
class Profile {
  readonly phases = new Map<string, number[]>();
  readonly client: number[] = [];

  add(headers: IncomingHttpHeaders, body: string): void {
    const timing = headers['server-timing'];
    if (typeof timing !== 'string') return;
    for (const part of timing.split(',')) {
      const [name, dur] = part.trim().split(';dur=');
      this.push(name!, Number(dur));
    }
    const stages = STAGES.exec(body);
    if (stages) for (const st of JSON.parse(stages[1]!) as { name: string; ms: number }[]) this.push(`score.${st.name}`, st.ms);
  }

  private push(name: string, ms: number): void {
    let list = this.phases.get(name);
    if (!list) this.phases.set(name, (list = []));
    list.push(ms);
  }

  /** Median milliseconds per phase, in the order they happen. */
  medians(): Record<string, number> {
    return Object.fromEntries([...this.phases].map(([name, list]) => [name, Math.round(percentile(list, 50) * 1000) / 1000]));
  }
}
let profile: Profile | undefined;

async function load(url: string, title: string, scoring: boolean, o: { headers?: Record<string, string>; makeBody?: () => string } = {}) {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'content-type': 'application/json', ...o.headers },
    requests: [
      {
        // The same request bodies for both loads (the bare route parses and ignores them).
        setupRequest: (req) => ({ ...req, body: (o.makeBody ?? body)() }),
        // Both loads do the same client work per response (autocannon keeps the body for
        // onResponse, and one regular-expression search reads the server's latency_ms), so the
        // client on the shared cores costs the ceiling what it costs scoring.
        onResponse: (status: number, resBody: string, _context: unknown, headers: IncomingHttpHeaders | undefined) => {
          const m = LATENCY.exec(resBody);
          if (status === 200 && m && scoring) serverLatency.push(Number(m[1]));
          if (status === 200 && profile && headers) profile.add(headers, resBody);
        },
      },
    ],
  });
  const non2xx = result.non2xx + result.errors;
  process.stderr.write(
    `${title}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors/non-2xx ${non2xx}\n`,
  );
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, non2xx };
}

// Warm up both (JIT, history growth), then measure.
await autocannon({
  url: `${base}/api/risk/score`,
  method: 'POST',
  connections: 2,
  amount: 2000,
  headers: { 'content-type': 'application/json' },
  requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
});
await autocannon({
  url: `http://127.0.0.1:${trivialPort}/trivial`,
  method: 'POST',
  connections: 2,
  amount: 2000,
  headers: { 'content-type': 'application/json' },
  body: '{}',
});
await autocannon({
  url: `http://127.0.0.1:${trivialPort}/canned`,
  method: 'POST',
  connections: 2,
  amount: 2000,
  headers: { 'content-type': 'application/json' },
  body: '{}',
});
const ceiling = await load(`http://127.0.0.1:${trivialPort}/trivial`, 'bare Fastify JSON route (ceiling)', false);
const canned = await load(
  `http://127.0.0.1:${trivialPort}/canned`,
  `bare Fastify route sending a real score response (${cannedText.length} bytes) as it is`,
  false,
);
const scoring = await load(`${base}/api/risk/score`, 'POST /api/risk/score with explanations (public sandbox)', true);
const sandboxLatency = serverLatency;
serverLatency = [];
const rssAfter = memoryMb(server.pid!);
// The organization's key: warm-up, then the load; every request is a new, recorded transaction.
const keyHeaders = { authorization: `Bearer ${apiKey}` };
await autocannon({
  url: `${base}/api/v1/risk/score`,
  method: 'POST',
  connections: 2,
  amount: 2000,
  headers: { 'content-type': 'application/json', ...keyHeaders },
  requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
});
const rssBeforeKey = memoryMb(server.pid!);
const recordedBeforeKey = recorded();
profile = new Profile();
const keyed = await load(`${base}/api/v1/risk/score`, "POST /api/v1/risk/score with an API key (recorded in the organization's history)", true, {
  headers: keyHeaders,
  makeBody: newTransaction,
});
const keyedProfile = profile.medians();
profile = undefined;
const keyLatency = serverLatency;
serverLatency = [];
// Half that throughput at a fixed rate: the latency a customer sees below saturation (the goal is
// p99 ≤ 10 ms), and with --soak, how resident memory grows per recorded transaction over minutes.
const halfRate = Math.max(1, Math.round(keyed.rps / 2));
const halfSeconds = options.soak ? options.soak * 60 : DURATION;
const halfRecordedBefore = recorded();
const halfRss: Array<{ s: number; mb: number; recorded: number }> = [{ s: 0, mb: memoryMb(server.pid!), recorded: 0 }];
const sampler = setInterval(() => halfRss.push({ s: halfRss.length * 30, mb: memoryMb(server.pid!), recorded: recorded() - halfRecordedBefore }), 30_000);
const half = await autocannon({
  url: `${base}/api/v1/risk/score`,
  method: 'POST',
  connections: CONNECTIONS,
  overallRate: halfRate,
  duration: halfSeconds,
  headers: { 'content-type': 'application/json', ...keyHeaders },
  requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
});
clearInterval(sampler);
await new Promise((resolve) => setTimeout(resolve, 200));
halfRss.push({ s: halfSeconds, mb: memoryMb(server.pid!), recorded: recorded() - halfRecordedBefore });
const halfLoad = {
  rate: halfRate,
  seconds: halfSeconds,
  rps: Math.round(half.requests.average),
  p50_ms: half.latency.p50,
  p99_ms: half.latency.p99,
  non_2xx: half.non2xx + half.errors,
  p99_at_most_10ms: half.latency.p99 <= 10,
  rss_mb: halfRss,
  mb_per_100k_recorded: Math.round(((halfRss.at(-1)!.mb - halfRss[0]!.mb) / Math.max(1, halfRss.at(-1)!.recorded)) * 100_000 * 10) / 10,
};
process.stderr.write(
  `the same at half its throughput (${halfRate} req/s for ${halfSeconds} s): p50 ${half.latency.p50} ms, p99 ${half.latency.p99} ms, errors/non-2xx ${halfLoad.non_2xx}; resident ${halfRss[0]!.mb} → ${halfRss.at(-1)!.mb} MB over ${halfRss.at(-1)!.recorded} recorded\n`,
);
// Let the decision log store the last batch before reading memory.
await new Promise((resolve) => setTimeout(resolve, 200));
const rssAfterKey = memoryMb(server.pid!);
const stored = recorded() - recordedBeforeKey;
let mbPer100k = ((rssAfterKey - rssBeforeKey) / stored) * 100_000;
let historyMemory = `${stored} transactions recorded during the key's load added ${rssAfterKey - rssBeforeKey} MB resident`;
serverLatency = [];
// The same load on the server that writes behind: what waiting for the commit costs.
await autocannon({
  url: `${writeBehindBase}/api/v1/risk/score`,
  method: 'POST',
  connections: 2,
  amount: 2000,
  headers: { 'content-type': 'application/json', authorization: `Bearer ${writeBehindKey}` },
  requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
});
const keyedWriteBehind = await load(`${writeBehindBase}/api/v1/risk/score`, 'the same with DURABILITY=write_behind (answered before the write)', true, {
  headers: { authorization: `Bearer ${writeBehindKey}` },
  makeBody: newTransaction,
});
writeBehindServer.kill('SIGTERM');
// With DATABASE_URL (a PostgreSQL server where this role may create databases): the same key's load
// and its profile on a server whose database is a fresh one there.
let postgres: { rps: number; p50: number; p99: number; profile: Record<string, number> } | undefined;
if (process.env.DATABASE_URL) {
  const fresh = await freshDatabase(process.env.DATABASE_URL);
  const { child: pgServer, url: pgBase } = await startServer({ ...serverEnv, DATABASE_URL: fresh.url });
  const pgKey = (await signIn.organization(pgBase, 'bench')).secret;
  await autocannon({
    url: `${pgBase}/api/v1/risk/score`,
    method: 'POST',
    connections: 2,
    amount: 2000,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${pgKey}` },
    requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
  });
  profile = new Profile();
  const run = await load(`${pgBase}/api/v1/risk/score`, 'the same on PostgreSQL (DURABILITY=commit)', true, {
    headers: { authorization: `Bearer ${pgKey}` },
    makeBody: newTransaction,
  });
  postgres = { rps: run.rps, p50: run.p50, p99: run.p99, profile: profile.medians() };
  profile = undefined;
  pgServer.kill('SIGTERM');
  await new Promise((resolve) => {
    pgServer.once('exit', resolve);
    setTimeout(resolve, 10_000).unref();
  });
  await fresh.drop();
}
// The full run measures a large history: a second organization imports the built-in example
// (255,552 transactions), and its first score loads that history into the server's memory.
let importLoad: { alone: Load; during?: Load; import_s?: number } | undefined;
if (!quick) {
  const second = (await (
    await fetch(`${base}/api/organizations`, { method: 'POST', headers: member, body: JSON.stringify({ name: 'bench-import' }) })
  ).json()) as { id: string };
  const secondKey = (
    (await (
      await fetch(`${base}/api/organizations/${second.id}/api-keys`, { method: 'POST', headers: member, body: JSON.stringify({ name: 'bench' }) })
    ).json()) as { secret: string }
  ).secret;
  // The first organization's recorded scores at a fixed rate, alone and while the import stores
  // its rows on the same embedded database: does an import hold up everyone else's commits?
  const atRate = (seconds: number, until?: Promise<unknown>) =>
    fixedRate({ base, key: apiKey, makeBody: newTransaction, rate: IMPORT_RATE, connections: 8, seconds, until });
  importLoad = { alone: await atRate(10) };
  const t0 = performance.now();
  const job = (await (
    await fetch(`${base}/api/organizations/${second.id}/history-imports`, { method: 'POST', headers: member, body: JSON.stringify({ example: true }) })
  ).json()) as { id: string };
  let imported!: () => void;
  const importing = atRate(600, new Promise<void>((resolve) => (imported = resolve)));
  try {
    for (;;) {
      const state = (await (await fetch(`${base}/api/jobs/${job.id}`, { headers: member })).json()) as { status: string; error?: string };
      if (state.status === 'succeeded') break;
      if (state.status === 'failed') throw new Error(`the example import failed: ${state.error}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    imported();
  }
  importLoad.during = await importing;
  importLoad.import_s = Math.round((performance.now() - t0) / 100) / 10;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = memoryMb(server.pid!);
  await fetch(`${base}/api/v1/risk/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secondKey}` },
    body: body(),
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = memoryMb(server.pid!);
  mbPer100k = ((after - before) / 255_552) * 100_000;
  historyMemory = `an organization's imported history of 255,552 transactions took ${after - before} MB resident once loaded (${before} → ${after} MB)`;
}
server.kill('SIGTERM');
trivial.kill('SIGTERM');
await signIn.close();
// Let the server shut down (and write a profile, with BENCH_SERVER_NODE_ARGS=--cpu-prof).
await new Promise((resolve) => {
  server.once('exit', resolve);
  setTimeout(resolve, 10_000).unref();
});

const ratio = scoring.rps / ceiling.rps;
const latencyP50 = percentile(sandboxLatency, 50);
const latencyP99 = percentile(sandboxLatency, 99);
const keyP50 = percentile(keyLatency, 50);
const keyP99 = percentile(keyLatency, 99);
console.log('');
console.log(`| Load (${CONNECTIONS} connections, ${DURATION} s each, loopback) | req/s | p50 ms | p99 ms |`);
console.log('|---|---|---|---|');
console.log(`| bare Fastify JSON route (ceiling) | ${Math.round(ceiling.rps)} | ${ceiling.p50} | ${ceiling.p99} |`);
console.log(`| bare route sending a ${cannedText.length}-byte score response as it is | ${Math.round(canned.rps)} | ${canned.p50} | ${canned.p99} |`);
console.log(`| POST /api/risk/score, explain=true (public sandbox) | ${Math.round(scoring.rps)} | ${scoring.p50} | ${scoring.p99} |`);
console.log(
  `| POST /api/v1/risk/score, explain=true, API key, each a new recorded transaction (DURABILITY=commit) | ${Math.round(keyed.rps)} | ${keyed.p50} | ${keyed.p99} |`,
);
console.log(`| the same, DURABILITY=write_behind | ${Math.round(keyedWriteBehind.rps)} | ${keyedWriteBehind.p50} | ${keyedWriteBehind.p99} |`);
console.log('');
console.log(`scoring throughput / ceiling: ${(ratio * 100).toFixed(1)} % (goal ≥ 40 %)`);
console.log(
  `sending the response alone / ceiling: ${((canned.rps / ceiling.rps) * 100).toFixed(1)} % (the most any server sending this response reaches here); scoring / that: ${((scoring.rps / canned.rps) * 100).toFixed(1)} %`,
);
console.log(
  `server-side latency_ms over ${sandboxLatency.length} sandbox responses: p50 ${latencyP50.toFixed(3)} ms (goal < 1 ms), p99 ${latencyP99.toFixed(3)} ms`,
);
console.log(
  `with an API key: ${((keyed.rps / ceiling.rps) * 100).toFixed(1)} % of the ceiling, ${((keyed.rps / scoring.rps) * 100).toFixed(1)} % of the sandbox's throughput; latency_ms over ${keyLatency.length} responses p50 ${keyP50.toFixed(3)} ms (goal < 1 ms), p99 ${keyP99.toFixed(3)} ms`,
);
console.log(
  `DURABILITY=commit against write_behind: ${((keyed.rps / keyedWriteBehind.rps) * 100).toFixed(1)} % of the throughput; client p50/p99 ${keyed.p50}/${keyed.p99} ms against ${keyedWriteBehind.p50}/${keyedWriteBehind.p99} ms`,
);
console.log(
  `server resident memory: ${rssAfterStart} MB after start, ${rssAfter} MB after the sandbox load (goal < 300 MB), ${rssAfterKey} MB after the key's load`,
);
if (importLoad)
  console.log(
    `recorded scores at ${IMPORT_RATE} req/s while another organization imports the example (${importLoad.import_s} s): p50/p99 ${importLoad.during!.p50_ms}/${importLoad.during!.p99_ms} ms, max ${importLoad.during!.max_ms} ms, against ${importLoad.alone.p50_ms}/${importLoad.alone.p99_ms} ms alone: p99 × ${(importLoad.during!.p99_ms / importLoad.alone.p99_ms).toFixed(2)}`,
  );
console.log(
  `organization history: ${historyMemory}: ${mbPer100k.toFixed(1)} MB per 100,000 transactions${quick ? ' (a short load: the full run measures an imported history of 255,552 transactions)' : ''}`,
);
console.log(`start-up steps (ms): ${JSON.stringify(startup)}`);
console.log('');
console.log(`where a recorded score's time goes (DURABILITY=commit, embedded database; medians over the key's load, ms; client p50 ${keyed.p50} ms):`);
for (const [name, median] of Object.entries(keyedProfile))
  console.log(`  ${name.padEnd(20)} ${median.toFixed(3)}${postgres ? `   PostgreSQL ${(postgres.profile[name] ?? NaN).toFixed(3)}` : ''}`);
if (postgres)
  console.log(
    `on PostgreSQL: ${Math.round(postgres.rps)} req/s, client p50/p99 ${postgres.p50}/${postgres.p99} ms (${((postgres.rps / scoring.rps) * 100).toFixed(1)} % of the public route)`,
  );
console.log(
  `the recorded route against the public route: ${((keyed.rps / scoring.rps) * 100).toFixed(1)} % (goal ≥ 50 %); the public route against the canned answer: ${((scoring.rps / canned.rps) * 100).toFixed(1)} % (goal ≥ 40 %)`,
);
console.log(
  `the recorded route at half its throughput (${halfLoad.rate} req/s, ${halfLoad.seconds} s): client p50/p99 ${halfLoad.p50_ms}/${halfLoad.p99_ms} ms (goal p99 ≤ 10 ms); resident memory ${halfRss[0]!.mb} → ${halfRss.at(-1)!.mb} MB, ${halfLoad.mb_per_100k_recorded} MB per 100,000 recorded (goal ≤ 50)`,
);
console.log(
  JSON.stringify({
    benchmark: 'http',
    quick,
    duration_s: DURATION,
    connections: CONNECTIONS,
    ceiling: { rps: Math.round(ceiling.rps), p50_ms: ceiling.p50, p99_ms: ceiling.p99 },
    canned_response: { bytes: cannedText.length, rps: Math.round(canned.rps), ratio_to_ceiling: Math.round((canned.rps / ceiling.rps) * 1000) / 1000 },
    scoring: {
      rps: Math.round(scoring.rps),
      p50_ms: scoring.p50,
      p99_ms: scoring.p99,
      non_2xx: scoring.non2xx,
      server_latency_ms: { p50: latencyP50, p99: latencyP99 },
    },
    api_key_scoring_write_behind: {
      rps: Math.round(keyedWriteBehind.rps),
      p50_ms: keyedWriteBehind.p50,
      p99_ms: keyedWriteBehind.p99,
      non_2xx: keyedWriteBehind.non2xx,
      ratio_commit_to_write_behind: Math.round((keyed.rps / keyedWriteBehind.rps) * 1000) / 1000,
    },
    api_key_scoring: {
      rps: Math.round(keyed.rps),
      p50_ms: keyed.p50,
      p99_ms: keyed.p99,
      non_2xx: keyed.non2xx,
      recorded: stored,
      server_latency_ms: { p50: keyP50, p99: keyP99 },
      ratio_to_ceiling: Math.round((keyed.rps / ceiling.rps) * 1000) / 1000,
    },
    api_key_profile_ms: keyedProfile,
    api_key_half_load: halfLoad,
    api_key_scoring_postgres: postgres
      ? {
          rps: Math.round(postgres.rps),
          p50_ms: postgres.p50,
          p99_ms: postgres.p99,
          ratio_to_public: Math.round((postgres.rps / scoring.rps) * 1000) / 1000,
          profile_ms: postgres.profile,
        }
      : null,
    recorded_to_public: Math.round((keyed.rps / scoring.rps) * 1000) / 1000,
    public_to_canned: Math.round((scoring.rps / canned.rps) * 1000) / 1000,
    ratio: Math.round(ratio * 1000) / 1000,
    goals: { ratio_at_least_0_4: ratio >= 0.4, server_p50_under_1ms: latencyP50 < 1, api_key_p50_under_1ms: keyP50 < 1, rss_under_300mb: rssAfter < 300 },
    rss_mb: {
      after_start: rssAfterStart,
      after_benchmark: rssAfter,
      before_api_key_load: rssBeforeKey,
      after_api_key_load: rssAfterKey,
      organization_history_per_100k_transactions: Math.round(mbPer100k * 10) / 10,
    },
    startup_ms: startup,
    during_import: importLoad ?? null,
  }),
);
process.exit(0);
