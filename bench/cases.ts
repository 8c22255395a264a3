// `npm run bench:cases [-- --quick]`: what cases cost the recorded route. One server on the
// embedded database, two organizations with the same rules, which send about 5 % of payments to
// review and approve the rest: one has an inbox, so each of those reviews opens its customer's case
// or joins the one open (inside the decision log's group commit, with its timeline entry and its
// `case.opened` event), the other has none (the baseline). Rounds alternate between the two; the
// ratio is of the medians (goal: at least 95 %). A page of a million cases is bench:listing's.
// Prints a table, then one JSON object.

import type { ChildProcess } from 'node:child_process';
import { benchmarkCommandLine, quick } from './harness.ts';
import { startServer, stopServer } from './server-process.ts';
import { pairedRounds } from './paired-load.ts';
import { SignIn } from '../test/support/processes.ts';

benchmarkCommandLine({
  name: 'bench:cases',
  about: 'The recorded route when 5 % of its payments open or join a case, against the same route for an organization without an inbox.',
  quick: '3 rounds of 4 s instead of 8 of 10 s',
  notes: ['Starts the compiled server (dist/, `npm run build:server`), as `npm start` does.'],
});
const ROUNDS = quick ? 3 : 8;
const ROUND_SECONDS = quick ? 4 : 10;
const CONNECTIONS = 16;

const signIn = await SignIn.start();
let server: { child: ChildProcess; url: string } | undefined;
try {
  server = await startServer({ SCORE_RATE_PER_MINUTE: '100000000', ...signIn.env });
  const base = server.url;
  // Amounts run 5–405 (bench/requests.ts): above 385, about 5 % of payments.
  const reviewShare = 'amount > 385.0';
  const organization = async (name: string, inbox: boolean) => {
    const org = await signIn.organization(base, name);
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}/api/organizations/${org.id}${path}`, { method: 'POST', headers: org.member, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string };
    };
    await post('/rules', { name: 'Review', expression: reviewShare, action: 'review', status: 'active' });
    await post('/rules', { name: 'Approve the rest', expression: `!(${reviewShare})`, action: 'allow', status: 'active' });
    const made = inbox ? await post('/inboxes', { name: 'Everything', sla_hours: 24 }) : undefined;
    return { org, inboxId: made?.id };
  };
  const plain = (await organization('no inbox', false)).org.secret;
  const caseful = await organization('cases', true);
  const withCases = caseful.org.secret;
  process.stderr.write(`${ROUNDS} rounds of ${ROUND_SECONDS} s a side, ${CONNECTIONS} connections…\n`);
  const paired = await pairedRounds({
    baseline: { base, key: plain },
    changed: { base, key: withCases },
    rounds: ROUNDS,
    seconds: ROUND_SECONDS,
    connections: CONNECTIONS,
    label: 'with cases',
  });
  // What the rounds opened: every review a case of its own customer (the requests' customers are
  // many), so the inbox's open cases count them.
  const stats = await fetch(`${base}/api/organizations/${caseful.org.id}/inboxes/${caseful.inboxId}/stats`, { headers: caseful.org.member });
  if (stats.status !== 200) throw new Error(`stats: ${stats.status} ${await stats.text()}`);
  const opened = ((await stats.json()) as { open: number }).open;
  if (opened === 0) throw new Error('no case was opened: the measurement would be of nothing');
  console.log('| POST /api/v1/risk/score, embedded database | req/s (median of rounds) |');
  console.log('|---|---|');
  console.log(`| no inbox (baseline) | ${Math.round(paired.baseline)} |`);
  console.log(`| an inbox: 5 % of payments open or join a case | ${Math.round(paired.changed)} |`);
  console.log(`\nthroughput with cases: ${paired.ratio.toFixed(3)} of without (goal ≥ 0.95); ${opened.toLocaleString('en')} cases open in the inbox`);
  console.log(
    JSON.stringify({
      benchmark: 'cases',
      quick,
      rounds: paired.rounds,
      baseline_rps: Math.round(paired.baseline),
      cases_rps: Math.round(paired.changed),
      ratio: Math.round(paired.ratio * 1000) / 1000,
      cases_open: opened,
      goals: { throughput_at_least_95_percent: paired.ratio >= 0.95 },
    }),
  );
} finally {
  if (server) await stopServer(server.child);
  await signIn.close();
}
process.exit(0);
