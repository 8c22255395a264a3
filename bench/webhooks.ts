// `npm run bench:webhooks [-- --quick]`: what webhooks cost the scoring route, and how soon they
// arrive. Two parts, each with its baseline in the same run:
// 1. API-key scoring (every request a new recorded transaction) on the embedded database, one
//    process, with rules that send about 5 % of payments to review and approve the rest: without any webhook endpoint
//    (the baseline) and with one endpoint subscribed to every event type, delivering to a receiver
//    on loopback. Rounds alternate between the two servers; the ratio is of the medians (goal: at
//    least 95 %).
// 2. With DATABASE_URL (a PostgreSQL server where this role may create databases): two processes
//    on one database, each scoring half of N payments that all go to review at a fixed rate, every
//    one a `decision.review` event; the receiver measures each event's delay from its creation
//    (the recording transaction) to its arrival. Goals: p99 under 1 s, none lost, none twice.
// Prints a table, then one JSON object.

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { dropDatabase } from '../test/support/server.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { startServer } from './server-process.ts';
import { fixedRate } from './fixed-rate.ts';
import { scoreRequests } from './requests.ts';
import { median, pairedRounds } from './paired-load.ts';
import { SignIn } from '../test/support/processes.ts';
import { Receiver } from '../test/support/receiver.ts';

benchmarkCommandLine({
  name: 'bench:webhooks',
  about: 'What a subscribed webhook endpoint costs API-key scoring, and (with DATABASE_URL) the delay from commit to delivery with two processes.',
  quick: `2 rounds of 4 s, and 2,000 events instead of 10,000`,
});
const ROUNDS = quick ? 2 : 4;
const ROUND_SECONDS = quick ? 4 : 10;
const CONNECTIONS = 16;
const EVENTS = quick ? 2_000 : 10_000;
const RATE = 500;

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const signIn = await SignIn.start();
const receiver = await new Receiver().start();
const children: { child: ChildProcess }[] = [];
const cleanUp = async () => {
  for (const c of children) c.child.kill('SIGTERM');
  await receiver.close();
  await signIn.close();
};
const env = { SCORE_RATE_PER_MINUTE: '100000000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...signIn.env };

/** An organization whose payments matching `reviewRule` go to review and all others are approved
 *  (an allow rule: the model's own decisions on the benchmark's made-up traffic flag far more than
 *  a payment team's would). */
async function organization(base: string, reviewRule: string, endpoint: boolean): Promise<string> {
  const org = await signIn.organization(base, 'bench');
  const post = (path: string, body: unknown) =>
    fetch(`${base}/api/organizations/${org.id}${path}`, { method: 'POST', headers: org.member, body: JSON.stringify(body) });
  for (const [name, expression, action] of [
    ['Review', reviewRule, 'review'],
    ['Approve the rest', `!(${reviewRule})`, 'allow'],
  ]) {
    const rule = await post('/rules', { name, expression, action, status: 'active' });
    if (rule.status !== 201) throw new Error(`rule: ${rule.status} ${await rule.text()}`);
  }
  if (endpoint) {
    const e = await post('/webhooks', {
      url: receiver.url,
      events: [
        'decision.review',
        'decision.block',
        'review.decided',
        'outcome.recorded',
        'job.succeeded',
        'job.failed',
        'drift.verdict_changed',
        'rule.changed',
      ],
    });
    if (e.status !== 201) throw new Error(`endpoint: ${e.status} ${await e.text()}`);
  }
  return org.secret;
}

// --- 1. the scoring route with and without a subscribed endpoint ----------------------------------
process.stderr.write('part 1: two servers on the embedded database…\n');
const [plain, hooked] = await Promise.all([startServer(env), startServer(env)]);
children.push(plain, hooked);
// Amounts run 5–405 (bench/requests.ts): above 385, about 5 % of payments.
const reviewShare = 'amount > 385.0';
const plainKey = await organization(plain.url, reviewShare, false);
const hookedKey = await organization(hooked.url, reviewShare, true);
const receivedBefore = receiver.received.length;
const paired = await pairedRounds({
  baseline: { base: plain.url, key: plainKey },
  changed: { base: hooked.url, key: hookedKey },
  rounds: ROUNDS,
  seconds: ROUND_SECONDS,
  connections: CONNECTIONS,
  label: 'with an endpoint',
});
const rounds = paired.rounds.map((r) => ({ plain: r.baseline, hooked: r.changed, plainP99: r.baselineP99, hookedP99: r.changedP99 }));
await new Promise((r) => setTimeout(r, 2_000));
const delivered = receiver.received.length - receivedBefore;
const ratio = paired.ratio;
plain.child.kill('SIGTERM');
hooked.child.kill('SIGTERM');

// --- 2. delay from commit to delivery, two processes on PostgreSQL --------------------------------
let delay: { events: number; received: number; distinct: number; p50_ms: number; p99_ms: number; max_ms: number } | null = null;
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('part 2 skipped: set DATABASE_URL (a PostgreSQL server where this role may CREATE DATABASE) for the two-process delivery delay.\n');
} else {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const name = `bench_${randomBytes(4).toString('hex')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  try {
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    process.stderr.write(`part 2: two processes on PostgreSQL, ${EVENTS} events at ${RATE}/s…\n`);
    const first = await startServer({ ...env, DATABASE_URL: u.toString() });
    children.push(first);
    const second = await startServer({ ...env, DATABASE_URL: u.toString() });
    children.push(second);
    const key = await organization(first.url, 'amount >= 0.0', true);
    receiver.received.length = 0;
    const requests = scoreRequests();
    const seconds = EVENTS / RATE;
    const loads = await Promise.all(
      [first, second].map((s) => fixedRate({ base: s.url, key, makeBody: requests.newTransaction, rate: RATE / 2, connections: 8, seconds })),
    );
    const sent = loads.reduce((s, l) => s + Math.round(l.served_rps * l.seconds), 0);
    // What was committed: a request cut off when its load ended may not have been.
    const counted = postgres(u.toString(), { max: 1, onnotice: () => {} });
    const [{ n: expected }] = await counted<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_events WHERE type = 'decision.review'`;
    await counted.end();
    await receiver.waitFor(expected, 60_000).catch(() => {});
    await new Promise((r) => setTimeout(r, 1_000));
    const delays = receiver.received.map((r) => r.at - Date.parse((JSON.parse(r.body) as { created_at: string }).created_at));
    const ids = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    delay = {
      events: expected,
      received: receiver.received.length,
      distinct: ids.size,
      p50_ms: Math.round(percentile(delays, 50)),
      p99_ms: Math.round(percentile(delays, 99)),
      max_ms: Math.round(Math.max(...delays)),
    };
    process.stderr.write(
      `sent ${sent} (${requests.recorded()} made, ${expected} events committed), received ${delay.received} (${delay.distinct} distinct); delay min ${Math.round(Math.min(...delays))} ms, p10 ${Math.round(percentile(delays, 10))} ms; by arrival: ${[0, 0.25, 0.5, 0.75, 0.99].map((q) => Math.round(delays[Math.floor(q * (delays.length - 1))]!)).join(' ')} ms\n`,
    );
    first.child.kill('SIGTERM');
    second.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    await dropDatabase(admin, name);
    await admin.end();
  }
}
await cleanUp();

console.log('');
console.log(`| API-key scoring, embedded database (${CONNECTIONS} connections, ${ROUNDS} × ${ROUND_SECONDS} s each) | median req/s | median p99 ms |`);
console.log('|---|---|---|');
console.log(`| no webhook endpoint (baseline) | ${Math.round(median(rounds.map((x) => x.plain)))} | ${median(rounds.map((x) => x.plainP99))} |`);
console.log(
  `| one endpoint, every event type (${delivered} deliveries) | ${Math.round(median(rounds.map((x) => x.hooked)))} | ${median(rounds.map((x) => x.hookedP99))} |`,
);
console.log(`with / without an endpoint: ${(ratio * 100).toFixed(1)} % (goal ≥ 95 %)`);
if (delay)
  console.log(
    `two processes on PostgreSQL, ${delay.events} events: delay from commit to delivery p50 ${delay.p50_ms} ms, p99 ${delay.p99_ms} ms, max ${delay.max_ms} ms; received ${delay.received}, distinct ${delay.distinct} (goals: p99 < 1000 ms, all once)`,
  );
console.log(
  JSON.stringify({
    benchmark: 'webhooks',
    quick,
    rounds,
    ratio_with_endpoint: Math.round(ratio * 1000) / 1000,
    deliveries_during_load: delivered,
    delivery_delay: delay,
    goals: {
      throughput_at_least_95_percent: ratio >= 0.95,
      ...(delay ? { p99_delay_under_1s: delay.p99_ms < 1000, none_lost: delay.distinct === delay.events, none_twice: delay.received === delay.distinct } : {}),
    },
  }),
);
process.exit(0);
