// A stop is bounded, whatever the log destination does: the real server (`src/main.ts`, as
// `npm start` runs it) in a child process whose standard output is a pipe that nobody reads. After a
// few hundred logged requests (scored with an organization's key, each recorded) the pipe is full;
// the server must still answer, and on SIGTERM exit within SHUTDOWN_TIMEOUT_SECONDS with every
// decision it acknowledged stored (synchronous log writes, or pino's synchronous flush at exit,
// would wait on the pipe for ever). With WEB_CONCURRENCY=2 (PostgreSQL) the primary stops its two
// server processes the same way, within the same deadline.

import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { openDatabase } from '../../src/storage/open.ts';
import { listeningOn, SignIn } from '../support/processes.ts';
import { backends, freshDatabase, tempDir } from '../support/server.ts';

const SHUTDOWN_TIMEOUT_SECONDS = 5;
const REQUESTS = 600;

const cases = backends().flatMap((backend) => [{ backend, processes: 1 }, ...(backend.databaseUrl ? [{ backend, processes: 2 }] : [])]);

for (const { backend, processes } of cases) {
  t.test(`a server${processes > 1 ? ` of ${processes} processes` : ''} whose log pipe is not read stops within its deadline on ${backend.name}`, async (t) => {
    const signIn = await SignIn.start();
    const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
    const dataDir = tempDir('shutdown-');
    const child = spawn(process.execPath, ['src/main.ts'], {
      env: {
        ...process.env,
        // A port the system gives (the workers share it), read from the ready line.
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DATABASE_URL: db?.url ?? '',
        LOG_LEVEL: 'debug',
        ...signIn.env,
        SCORE_RATE_PER_MINUTE: '1000000',
        SHUTDOWN_TIMEOUT_SECONDS: String(SHUTDOWN_TIMEOUT_SECONDS),
        WEB_CONCURRENCY: String(processes),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Nobody reads the server's standard output: the pipe fills and stays full (at debug every
    // request has a line; at info successes are only summarised every few seconds).
    child.stdout!.pause();
    let exited = false;
    child.on('exit', () => (exited = true));
    t.teardown(async () => {
      if (!exited) child.kill('SIGKILL');
      await signIn.close();
      await db?.drop();
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    while (!/ready on|ready: /.test(stderr)) {
      if (exited) throw new Error(`the server exited: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const base = listeningOn(stderr)!;
    const { id: orgId, secret } = await signIn.organization(base, 'o');

    let acknowledged = 0;
    for (let i = 0; i < REQUESTS; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          fetch(`${base}/api/v1/risk/score`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
            body: JSON.stringify({ amount: 10 + j, customer_id: `c${(i + j) % 37}`, merchant_id: `m${(i + j) % 11}`, transaction_id: `t-${i + j}` }),
            signal: AbortSignal.timeout(10_000),
          }),
        ),
      );
      acknowledged += batch.filter((r) => r.status === 200).length;
    }
    t.equal(acknowledged, REQUESTS, 'every request answered while the log pipe was full');
    const health = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(10_000) });
    t.equal(health.status, 200, 'still answering');

    const stopped = performance.now();
    child.kill('SIGTERM');
    const [code] = (await Promise.race([
      once(child, 'exit'),
      new Promise((resolve) => setTimeout(() => resolve(['timed out']), (SHUTDOWN_TIMEOUT_SECONDS + 5) * 1000)),
    ])) as [number | string];
    const seconds = (performance.now() - stopped) / 1000;
    t.ok(seconds <= SHUTDOWN_TIMEOUT_SECONDS + 1, `exited ${seconds.toFixed(2)} s after SIGTERM (deadline ${SHUTDOWN_TIMEOUT_SECONDS} s)`);
    t.equal(code, 0, 'a graceful stop, not the deadline');

    const after = await openDatabase({ dataDir, ...(db ? { databaseUrl: db.url } : {}) });
    try {
      const [row] = await after.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE organization_id = $1', [orgId]);
      t.equal(row!.n, acknowledged, 'every acknowledged decision is stored');
    } finally {
      await after.close();
    }
  });
}
