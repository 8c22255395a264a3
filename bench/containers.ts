// `npm run bench:containers [-- --quick]` (needs Podman, as the container test does, and
// DATABASE_URL: a PostgreSQL server on which the benchmark may create and drop a database): the
// recorded scoring route (an API key, every request a new transaction) through compose.yaml, nginx
// hashing on the key in front of two service containers on the composition's PostgreSQL, against
// its baseline in the same run: the same two server processes run directly on this machine, on a
// PostgreSQL of their own, each sent its key's requests. Two keys, one placed on each container,
// each loaded by half the connections, in alternating rounds. The images are the container test's
// (built on stand-in bases, test/support/containers.ts; reused once built). Prints each round, the
// throughput ratio (goal ≥ 90 %), then one JSON object.

import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { benchmarkCommandLine, quick } from './harness.ts';
import { startServer, stopServer } from './server-process.ts';
import { scoreRequests } from './requests.ts';
import { dropDatabase } from '../test/support/server.ts';
import { SignIn } from '../test/support/processes.ts';
import { buildAppImage, Composition, IMAGE_PREFIX } from '../test/support/containers.ts';
import { standIns } from '../test/support/stand-ins.ts';

benchmarkCommandLine({
  name: 'bench:containers',
  about: 'The recorded scoring route through nginx to two containers (compose.yaml), against the same two processes run directly.',
  quick: 'one short round each (under a minute once the images are built)',
});

const DURATION = quick ? 4 : 8;
const ROUNDS = quick ? 1 : 6;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const GOAL = 0.9;
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('bench:containers runs its baseline on PostgreSQL: set DATABASE_URL to a server where this role may CREATE DATABASE.\n');
  process.exit(2);
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const RATE = { SCORE_RATE_PER_MINUTE: '100000000', LOG_LEVEL: 'warn' };

// --- the composition ------------------------------------------------------------------------------
say('making the images (reused when built: localhost/fraud-test-*)…');
const bases = await standIns(say);
const app = `${IMAGE_PREFIX}app:latest`;
await buildAppImage(app, bases);
const composition = new Composition(
  `fraud-bench-${randomBytes(3).toString('hex')}`,
  { ...bases, app },
  {
    SESSION_SECRET: randomBytes(32).toString('hex'),
    POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
    WEB_CONCURRENCY: '1',
    ...RATE,
  },
);

// --- the baseline: two processes on this machine's PostgreSQL ----------------------------------------
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
const database = `bench_${randomBytes(4).toString('hex')}`;
const signIn = await SignIn.start();
const direct: Awaited<ReturnType<typeof startServer>>[] = [];
let cleanedUp = false;
async function cleanUp(): Promise<void> {
  if (cleanedUp) return;
  cleanedUp = true;
  await Promise.all(direct.map((s) => stopServer(s.child)));
  await signIn.close();
  await composition.down();
  await dropDatabase(admin, database).catch(() => undefined);
  await admin.end();
}
process.on('uncaughtException', (e) => {
  say(`bench:containers: ${(e as Error).message}`);
  void cleanUp().finally(() => process.exit(1));
});

say('starting the composition and two processes…');
await composition.compose(['up', '-d', '--no-build']);
const nginx = await composition.base();
await admin.unsafe(`CREATE DATABASE ${database}`);
const url = new URL(adminUrl);
url.pathname = `/${database}`;
const env = { ...RATE, ...signIn.env, DATABASE_URL: url.toString() };
// The first applies the migrations before the second starts.
direct.push(await startServer(env));
direct.push(await startServer(env));

// --- keys --------------------------------------------------------------------------------------------
const { newTransaction } = scoreRequests();
async function scoreOnce(base: string, key: string, id: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...JSON.parse(newTransaction()), transaction_id: id }),
    });
    await res.arrayBuffer();
    if (res.status === 200) return;
    if (attempt > 240) throw new Error(`scoring through ${base} answered ${res.status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
// One key on each container, as nginx places them; one organization on each direct process.
const placed = await composition.keysOnBoth((key, id) => scoreOnce(nginx, key, id));
const containerKeys = [placed.find((k) => k.on === 'app1')!.key, placed.find((k) => k.on === 'app2')!.key];
const directKeys = [(await signIn.organization(direct[0]!.url, 'bench a')).secret, (await signIn.organization(direct[1]!.url, 'bench b')).secret];

// --- loads -------------------------------------------------------------------------------------------
interface Load {
  rps: number;
  p50: number;
  p99: number;
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
  }).then((r) => ({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors }));
}

/** Both keys at once, half the connections each: the total. */
async function both(targets: { base: string; key: string }[], duration: number): Promise<Load> {
  const each = await Promise.all(targets.map((t) => load(t.base, t.key, CONNECTIONS / targets.length, duration)));
  return {
    rps: each.reduce((s, r) => s + r.rps, 0),
    p50: Math.max(...each.map((r) => r.p50)),
    p99: Math.max(...each.map((r) => r.p99)),
    non2xx: each.reduce((s, r) => s + r.non2xx, 0),
  };
}

const throughNginx = containerKeys.map((key) => ({ base: nginx, key }));
const directly = direct.map((s, i) => ({ base: s.url, key: directKeys[i]! }));
// Warm-up: each organization's history loaded, connections open, code compiled.
await both(throughNginx, 2);
await both(directly, 2);
const rounds: { containers: Load; direct: Load; ratio: number }[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const containers = await both(throughNginx, DURATION);
  const baseline = await both(directly, DURATION);
  const ratio = containers.rps / baseline.rps;
  rounds.push({ containers, direct: baseline, ratio });
  say(
    `round ${round}: through nginx to two containers ${Math.round(containers.rps)} req/s (p99 ${containers.p99} ms, non-2xx ${containers.non2xx}); two processes directly ${Math.round(baseline.rps)} req/s (p99 ${baseline.p99} ms, non-2xx ${baseline.non2xx}): ${(ratio * 100).toFixed(1)} %`,
  );
}
await cleanUp();

const ratios = rounds.map((r) => r.ratio).sort((a, b) => a - b);
const ratio = ratios[ratios.length >> 1]!;
const errors = rounds.reduce((s, r) => s + r.containers.non2xx + r.direct.non2xx, 0);
console.log('');
console.log(`| recorded scoring, ${CONNECTIONS} connections, two keys, ${DURATION} s a round | req/s | p50 ms | p99 ms |`);
console.log('|---|---|---|---|');
for (const [i, r] of rounds.entries()) {
  console.log(`| round ${i + 1}: nginx, two containers (compose.yaml) | ${Math.round(r.containers.rps)} | ${r.containers.p50} | ${r.containers.p99} |`);
  console.log(`| round ${i + 1}: two processes directly (baseline) | ${Math.round(r.direct.rps)} | ${r.direct.p50} | ${r.direct.p99} |`);
}
console.log('');
console.log(`containers / direct throughput, median of ${rounds.length}: ${(ratio * 100).toFixed(1)} % (goal ≥ ${GOAL * 100} %); errors or non-2xx: ${errors}`);
console.log(
  JSON.stringify({
    benchmark: 'containers',
    quick,
    duration_s: DURATION,
    connections: CONNECTIONS,
    rounds,
    ratio: Math.round(ratio * 1000) / 1000,
    errors,
    goals: { within_10_percent: ratio >= GOAL, no_errors: errors === 0 },
  }),
);
process.exit(0);
