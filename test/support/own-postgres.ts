// A PostgreSQL server of the test's own, for tests that stop, restart or stall the server: initdb
// and pg_ctl from the installed PostgreSQL (Debian's /usr/lib/postgresql/<version>/bin, which CI
// installs) into a temporary directory, listening on a free loopback port. The shared server of
// TEST_DATABASE_URL is never touched, so the tests running beside this one are not disturbed.
// PostgreSQL refuses to run as root: under root the server runs as the `postgres` user.
// `stop` and `start` keep the data; `destroy` stops the server and removes the directory, and a
// test process that exits without it (a failure, a timeout) stops the server and removes it too.

import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postgresBinDir } from './components.ts';

const run = promisify(execFile);

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication, loopback only). */
  url: string;
  port: number;
  /** Stops the server (`fast`: ends the sessions and checkpoints; `immediate`: as a crash). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/** A port free on loopback now (for a server that must be told its port before it starts). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A PostgreSQL program's command line, as the postgres user when this process is root. */
function command(program: string, args: string[]): [string, string[]] {
  const bin = join(postgresBinDir()!, program);
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

async function pgRun(program: string, args: string[]): Promise<string> {
  const { stdout } = await run(...command(program, args), { timeout: 60_000 });
  return stdout;
}

/** Servers not destroyed yet: stopped (as a crash, at once) and removed when the process exits. */
const left = new Map<string, string>();
process.on('exit', () => {
  for (const [dir, data] of left) {
    try {
      execFileSync(...command('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']), { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // Not running.
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Initialises and starts a server; the caller must `destroy` it (a teardown). */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'own-pg-'));
  if (process.getuid?.() === 0) await run('chown', ['postgres', dir]);
  const data = join(dir, 'data');
  left.set(dir, data);
  const port = await freePort();
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  // Loopback only, its socket in its own directory; durability as a real server's except the
  // flushes to disk (an immediate stop is a crash of PostgreSQL, not of the machine).
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60 -c shared_buffers=32MB`;
  let running = false;
  const server: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pgRun('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', options, 'start']);
      running = true;
    },
    async stop(mode = 'fast') {
      if (!running) return;
      await pgRun('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', mode, 'stop']);
      running = false;
    },
    async destroy() {
      await server.stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
      left.delete(dir);
    },
  };
  try {
    await server.start();
  } catch (e) {
    await server.destroy();
    throw e;
  }
  return server;
}
