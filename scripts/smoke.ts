// `npm run smoke`: what a new user does first, on the Node that runs it. CI runs it after `npm ci` on
// each supported Node line other than the one the whole suite runs on (.ci/run: 22 and 26).
// It starts the server as `npm start` does (compiled JavaScript, embedded database in a temporary
// folder, built-in model, sign-in through a stand-in identity provider on loopback) and checks:
// health, the dashboard's page, one what-if score (public sandbox), one score with an API key
// (recorded), one dataset scored as a background job to its download, and no warning from Node on
// the server's standard error. Prints one line per
// check; exits 1 on the first that fails, naming it. Cleans up its server and folders.

import { simulate, toCsv } from '../src/domain/simulate.ts';
import { startServer } from '../bench/server-process.ts';
import { getWithKey, SignIn, withKey } from '../test/support/processes.ts';

const began = performance.now();
const say = (line: string) => process.stdout.write(`smoke (Node ${process.versions.node}): ${line}\n`);

async function check<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    const value = await step();
    say(`ok   ${what}`);
    return value;
  } catch (e) {
    say(`FAIL ${what}: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}

function expect(ok: boolean, why: string): void {
  if (!ok) throw new Error(why);
}

async function answer(res: Response, status: number): Promise<Record<string, any>> {
  const text = await res.text();
  expect(res.status === status, `HTTP ${res.status} (expected ${status}): ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, any>) : {};
}

const signIn = await SignIn.start();
const server = await check('the server starts as npm start starts it', () => startServer({ ...signIn.env, SCORE_RATE_PER_MINUTE: '1000' }));
const base = server.url;
try {
  await check('GET /api/health', async () => {
    const health = await answer(await fetch(`${base}/api/health`), 200);
    expect(health.status === 'ok', `status ${health.status}`);
  });
  await check('the dashboard page', async () => {
    const res = await fetch(`${base}/`);
    const html = await res.text();
    expect(res.status === 200 && html.includes('<html'), `HTTP ${res.status}`);
  });
  const transaction = { amount: 84.5, customer_id: 'C00042', merchant_id: 'M0007', location: 'Berlin', payment_type: 'card', explain: true };
  await check('POST /api/risk/score (public sandbox)', async () => {
    const score = await answer(
      await fetch(`${base}/api/risk/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(transaction) }),
      200,
    );
    expect(score.risk_score >= 0 && score.risk_score <= 1, `risk_score ${score.risk_score}`);
    expect(Array.isArray(score.reasons) && score.reasons.length > 0, 'no reasons');
  });
  const org = await check('sign in, make an organization and an API key', () => signIn.organization(base, 'Smoke'));
  await check('POST /api/v1/risk/score with the key (recorded)', async () => {
    const r = await withKey(base, org.secret, '/api/v1/risk/score', { ...transaction, transaction_id: 'smoke-1' });
    expect(r.status === 200, `HTTP ${r.status}: ${r.text.slice(0, 300)}`);
    const stored = await getWithKey(base, org.secret, '/api/v1/transactions/smoke-1');
    expect(stored.status === 200, `the recorded transaction: HTTP ${stored.status}`);
  });
  await check('a dataset scored as a background job, to its download', async () => {
    const csv = toCsv(simulate({ seed: 3, customers: 60, merchants: 12, days: 5 }));
    const rows = csv.trim().split('\n').length - 1;
    const member = org.member;
    const dataset = await answer(
      await fetch(`${base}/api/datasets/upload`, { method: 'POST', headers: { ...member, 'content-type': 'text/csv' }, body: csv }),
      201,
    );
    const job = await answer(
      await fetch(`${base}/api/datasets/score`, { method: 'POST', headers: member, body: JSON.stringify({ dataset_id: dataset.id }) }),
      202,
    );
    const deadline = Date.now() + 120_000;
    let state: Record<string, any>;
    for (;;) {
      state = await answer(await fetch(`${base}/api/jobs/${job.id}`, { headers: member }), 200);
      if (state.status === 'succeeded' || state.status === 'failed') break;
      expect(Date.now() < deadline, `still ${state.status} after 2 minutes`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(state.status === 'succeeded', `the job ${state.status}: ${JSON.stringify(state.error ?? '')}`);
    const download = await fetch(`${base}/api/jobs/${job.id}/download`, { headers: member });
    const lines = (await download.text()).trim().split('\n');
    expect(download.status === 200 && lines.length === rows + 1, `download: HTTP ${download.status}, ${lines.length - 1} rows of ${rows}`);
  });
  await check('no warning from Node at start (deprecations, experimental features)', async () => {
    const warning = server
      .stderr()
      .split('\n')
      .find((l) => /Warning:/.test(l));
    expect(warning === undefined, warning ?? '');
  });
} finally {
  server.child.kill('SIGTERM');
  await new Promise((r) => (server.child.exitCode !== null ? r(null) : server.child.once('exit', r)));
  await signIn.close();
}
say(`all checks passed in ${((performance.now() - began) / 1000).toFixed(1)} s`);
