// `npm run bench:containers [-- --quick]` (needs Podman, as the container test does, and
// DATABASE_URL: a PostgreSQL server on which the benchmark may create and drop a database): the
// recorded scoring route (an API key, every request a new transaction) through compose.yaml, nginx
// hashing on the key in front of two service containers on the composition's PostgreSQL, against
// its baseline in the same run: the same two server processes run directly on this machine, on a
// PostgreSQL of their own, each sent its key's requests. Two keys, one placed on each container,
// each loaded by half the connections, in alternating rounds (paired-load.ts). The images are the
// container test's (built on stand-in bases, test/support/stand-ins.ts; reused once built). Also
// times `compose up` to the first recorded score through nginx (an organization made in a container
// in between; goal < 30 s, images built). Prints each round, the throughput ratio (goal ≥ 90 %),
// then one JSON object.

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { benchmarkCommandLine, quick } from './harness.ts';
import { startServer, stopServer } from './server-process.ts';
import { pairedRounds } from './paired-load.ts';
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
const FIRST_SCORE_GOAL_S = 30;
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('bench:containers runs its baseline on PostgreSQL: set DATABASE_URL to a server where this role may CREATE DATABASE.\n');
  process.exit(2);
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const { newTransaction } = scoreRequests();
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

say('starting the composition…');
const up = Date.now();
await composition.compose(['up', '-d', '--no-build']);
const nginx = await composition.base();
const first = await composition.organization('first shop');
await scoreOnce(nginx, first.api_key, 'first');
const upToScore = (Date.now() - up) / 1000;
say(`compose up to the first recorded score: ${upToScore.toFixed(1)} s (goal < ${FIRST_SCORE_GOAL_S})`);
say('starting two processes…');
await admin.unsafe(`CREATE DATABASE ${database}`);
const url = new URL(adminUrl);
url.pathname = `/${database}`;
const env = { ...RATE, ...signIn.env, DATABASE_URL: url.toString() };
// The first applies the migrations before the second starts.
direct.push(await startServer(env));
direct.push(await startServer(env));

// --- keys --------------------------------------------------------------------------------------------
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
// Alternating rounds (the order flipped each round), the ratio of the medians (paired-load.ts).
const throughNginx = containerKeys.map((key) => ({ base: nginx, key }));
const directly = direct.map((s, i) => ({ base: s.url, key: directKeys[i]! }));
const result = await pairedRounds({
  baseline: directly,
  changed: throughNginx,
  rounds: ROUNDS,
  seconds: DURATION,
  connections: CONNECTIONS,
  label: 'through nginx to two containers',
});
await cleanUp();

console.log('');
console.log(
  `| recorded scoring, ${CONNECTIONS} connections, two keys, ${DURATION} s a round | two processes directly req/s (p99 ms) | nginx, two containers req/s (p99 ms) |`,
);
console.log('|---|---|---|');
for (const [i, r] of result.rounds.entries()) {
  console.log(`| round ${i + 1} | ${Math.round(r.baseline)} (${r.baselineP99}) | ${Math.round(r.changed)} (${r.changedP99}) |`);
}
console.log('');
console.log(`containers / direct throughput, ratio of the medians of ${ROUNDS}: ${(result.ratio * 100).toFixed(1)} % (goal ≥ ${GOAL * 100} %)`);
console.log(`compose up to the first recorded score: ${upToScore.toFixed(1)} s (goal < ${FIRST_SCORE_GOAL_S} s)`);
console.log(
  JSON.stringify({
    benchmark: 'containers',
    quick,
    duration_s: DURATION,
    connections: CONNECTIONS,
    rounds: result.rounds,
    direct_rps: Math.round(result.baseline),
    containers_rps: Math.round(result.changed),
    ratio: Math.round(result.ratio * 1000) / 1000,
    first_score_s: Math.round(upToScore * 10) / 10,
    goals: { within_10_percent: result.ratio >= GOAL, first_score_under_30_s: upToScore < FIRST_SCORE_GOAL_S },
  }),
);
process.exit(0);
