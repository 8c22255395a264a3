// An organization whose traffic the service scored and recorded, for the tests of
// `npm run train -- --organization`: its clock stepped through 90 days of payments, where at one
// merchant (M-bad, which the built-in model knows nothing about) 60 % are fraud and elsewhere
// almost none, the frauds reported a day after each payment (reported 10 days after the last);
// a second organization, "Quiet", with a few payments and no fraud. The server is stopped at the
// end (the embedded database belongs to one process: the command opens it itself).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type t from 'tap';
import { freshDatabase, tempDir, type Backend } from './server.ts';
import { IdentityProvider } from './idp.ts';
import { startLive, type LiveService, type Organization } from './accounts.ts';
import { Rng } from '../../src/domain/rng.ts';

const run = promisify(execFile);
export const DAY = 86_400_000;
const START = Date.UTC(2026, 5, 1);
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

export interface Traffic {
  shop: Organization;
  quiet: Organization;
  /** The last payment's time. */
  end: number;
  /** The command's environment (the service's storage settings). */
  env: Record<string, string>;
  /** The service on the same storage, its clock at `at` (ms); closed with the test. */
  open(at: number): Promise<LiveService>;
  /** POST with the organization's key to a running service. */
  key(live: LiveService, org: Organization, url: string, payload: object): Promise<{ statusCode: number; body: string }>;
}

/** `npm run train` with `args`, in a child process: its exit code, its JSON line, its standard error. */
export async function train(env: Record<string, string>, args: string[], timeout = 300_000): Promise<{ code: number; out: any; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['tools/train.ts', ...args], {
      env: { ...process.env, ...env },
      timeout,
      maxBuffer: 16 << 20,
    });
    return { code: 0, out: JSON.parse(stdout), err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: undefined, err: x.stderr };
  }
}

/** Scores `payments` over 90 days for "Shop" (and every ninth for "Quiet"), reports Shop's frauds,
 *  and stops the service. */
export async function recordedTraffic(test: Test, backend: Backend, payments: number): Promise<Traffic> {
  const idp = await new IdentityProvider().start();
  const dataDir = tempDir('train-org-');
  const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
  let now = START;
  const running = new Set<LiveService>();
  const open = async (at: number) => {
    now = at;
    const live = await startLive({ backend, dataDir, ...(db ? { databaseUrl: db.url } : {}), idp, clock: () => now });
    running.add(live);
    const close = live.close.bind(live);
    live.close = async () => {
      running.delete(live);
      await close();
    };
    return live;
  };
  test.teardown(async () => {
    for (const live of running) await live.close();
    await idp.close();
    await db?.drop();
  });
  const key = (live: LiveService, org: Organization, url: string, payload: object) =>
    live.s.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${org.key}` }, payload });
  const live = await open(START);
  const shop = await live.organization('Shop');
  const quiet = await live.organization('Quiet');
  const rng = new Rng(9);
  const frauds: { id: string; time: number }[] = [];
  for (let i = 0; i < payments; i++) {
    now = START + Math.floor((i * 90 * DAY) / payments);
    const bad = rng.uniform() < 0.15;
    const fraud = bad ? rng.uniform() < 0.6 : rng.uniform() < 0.002;
    const id = `tx-${i}`;
    const res = await key(live, shop, '/api/v1/risk/score', {
      transaction_id: id,
      amount: Math.round((20 + rng.uniform() * 300) * 100) / 100,
      customer_id: `c${Math.floor(rng.uniform() * 300)}`,
      merchant_id: bad ? 'M-bad' : `m${Math.floor(rng.uniform() * 40)}`,
      location: 'Lisbon',
      payment_type: 'card_present',
    });
    if (res.statusCode !== 200) throw new Error(res.body);
    if (fraud) frauds.push({ id, time: now });
    if (i % 9 === 0)
      await key(live, quiet, '/api/v1/risk/score', {
        transaction_id: id,
        amount: 50,
        customer_id: `c${i % 20}`,
        merchant_id: 'm1',
        location: 'Lisbon',
        payment_type: 'card_present',
      });
  }
  const end = now;
  now = end + 10 * DAY;
  for (let k = 0; k < frauds.length; k += 500) {
    const res = await key(live, shop, '/api/v1/outcomes', {
      outcomes: frauds
        .slice(k, k + 500)
        .map((f) => ({ transaction_id: f.id, outcome: 'fraud', source: 'chargeback', reported_at: new Date(f.time + DAY).toISOString() })),
    });
    if (res.statusCode !== 200) throw new Error(res.body);
  }
  await live.close();
  const env = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : { DATABASE_URL: '' }), LOG_LEVEL: 'silent' };
  return { shop, quiet, end, env, open, key };
}
