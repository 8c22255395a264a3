// `npm run bench:rings [-- --quick]`: scoring latency on one server process while it analyses fraud
// rings, against the same load on the same process with nothing else running. The server starts as
// `npm start` runs it (embedded database, built-in model); an organization imports the built-in
// example history, which queues a `rings` job for each of its 13 weekly windows (each window read
// from the database in slices, then Louvain over the week's graph in a worker thread). For as long
// as this process reports rings jobs running (`/api/health` `jobs_running`), a second organization's
// API key scores new transactions that are recorded (`POST /api/v1/risk/score`, as in bench:http)
// at a steady rate; then the same load runs as long again with nothing else running: the baseline.
// Reports client p50/p99 of both and their ratio, then one JSON line.

import autocannon from 'autocannon';
import { benchmarkCommandLine, quick } from './harness.ts';
import { startServer } from './server-process.ts';
import { SignIn } from '../test/support/processes.ts';
import { scoreRequests } from './requests.ts';

benchmarkCommandLine({
  name: 'bench:rings',
  about: 'Scoring p50/p99 on one server process during its ring analyses (worker thread) against the same load without them.',
  quick: 'a shorter warm-up',
});

/** A steady load a third of what one process serves here at most: room for the analyses' worker
 *  thread on a machine of two cores. */
const RATE = 400;
const CONNECTIONS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const signIn = await SignIn.start();
const { child: server, url: base } = await startServer({ SCORE_RATE_PER_MINUTE: '100000000', ...signIn.env });
const scorer = await signIn.organization(base, 'bench-scoring');
const importer = await signIn.organization(base, 'bench-rings');

const { newTransaction } = scoreRequests();

async function ringsRunning(): Promise<number> {
  const health = (await (await fetch(`${base}/api/health`)).json()) as { jobs_running: Record<string, number> };
  return health.jobs_running.rings ?? 0;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  seconds: number;
  /** Share of the health samples taken during the load that saw a rings job running. */
  rings_share: number;
}

/** The load at a fixed rate: for `seconds`, or (`untilRingsEnd`) until no rings job has run for
 *  half a second. */
async function load(title: string, o: { seconds?: number; untilRingsEnd?: boolean }): Promise<Load> {
  let samples = 0;
  let busy = 0;
  let sampling = true;
  const started = Date.now();
  let stop = () => {};
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${base}/api/v1/risk/score`,
        method: 'POST',
        connections: CONNECTIONS,
        overallRate: RATE,
        duration: o.seconds ?? 120,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${scorer.secret}` },
        requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    stop = () => instance.stop();
  });
  const sampler = (async () => {
    let idleSince: number | undefined;
    while (sampling) {
      samples++;
      if ((await ringsRunning()) > 0) {
        busy++;
        idleSince = undefined;
      } else if (o.untilRingsEnd) {
        idleSince ??= Date.now();
        if (Date.now() - idleSince >= 500) stop();
      }
      await sleep(50);
    }
  })();
  const result = await finished;
  sampling = false;
  await sampler;
  const out = {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    rings_share: samples ? Math.round((busy / samples) * 100) / 100 : 0,
  };
  process.stderr.write(
    `${title}: ${out.seconds} s, ${out.rps} req/s, p50 ${out.p50} ms, p99 ${out.p99} ms, errors/non-2xx ${out.non2xx}, rings running in ${Math.round(out.rings_share * 100)} % of samples\n`,
  );
  return out;
}

// Warm up (JIT, the organization's history).
await autocannon({
  url: `${base}/api/v1/risk/score`,
  method: 'POST',
  connections: 2,
  amount: quick ? 2000 : 5000,
  headers: { 'content-type': 'application/json', authorization: `Bearer ${scorer.secret}` },
  requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
});

// The import, then its windows' ring analyses, one job after another.
process.stderr.write('importing the example history (its weekly windows are then analysed for rings)…\n');
const job = (await (
  await fetch(`${base}/api/organizations/${importer.id}/history-imports`, { method: 'POST', headers: importer.member, body: JSON.stringify({ example: true }) })
).json()) as { id: string };
for (;;) {
  const status = ((await (await fetch(`${base}/api/jobs/${job.id}`, { headers: importer.member })).json()) as { status: string }).status;
  if (status === 'succeeded') break;
  if (status === 'failed') throw new Error('the example import failed');
  await sleep(200);
}
const waitedFrom = Date.now();
while ((await ringsRunning()) === 0) {
  if (Date.now() - waitedFrom > 60_000) throw new Error('no rings job started within a minute of the import');
  await sleep(20);
}
const during = await load(`${RATE} req/s while the rings jobs run`, { untilRingsEnd: true });
// The baseline: as long, once no rings job has run for two seconds.
let idleSince = Date.now();
while (Date.now() - idleSince < 2000) {
  if ((await ringsRunning()) > 0) idleSince = Date.now();
  await sleep(100);
}
const without = await load(`${RATE} req/s, nothing else running`, { seconds: Math.max(1, Math.round(during.seconds)) });

server.kill('SIGTERM');
await signIn.close();

const ratio = Math.round((during.p99 / without.p99) * 100) / 100;
console.log('');
console.log(`| POST /api/v1/risk/score at ${RATE} req/s, ${CONNECTIONS} connections | seconds | req/s | p50 ms | p99 ms | rings running |`);
console.log('|---|---|---|---|---|---|');
console.log(
  `| while the example's ring windows are analysed | ${during.seconds} | ${during.rps} | ${during.p50} | ${during.p99} | ${Math.round(during.rings_share * 100)} % |`,
);
console.log(`| nothing else running | ${without.seconds} | ${without.rps} | ${without.p50} | ${without.p99} | ${Math.round(without.rings_share * 100)} % |`);
console.log('');
console.log(`p99 during / without: ${ratio} (goal ≤ 2)`);
console.log(
  JSON.stringify({ benchmark: 'rings', quick, rate: RATE, connections: CONNECTIONS, during, without, p99_ratio: ratio, goals: { p99_within_2x: ratio <= 2 } }),
);
process.exit(0);
