// The database driver's defects and the patch that fixes them at install (patches/postgres+*.patch,
// applied by patch-package in postinstall), each run by test/fixtures/driver-closed-socket.ts through
// a proxy, with the driver as installed (patched) and with a copy that has the patch taken back out:
// the copy must still fail (else the patch is no longer needed: docs/operating.md, "The database
// driver's patch"), and the installed driver must not.
// - postgres.js 3.4.9 writes to a socket that its close handler has already set to null when a
//   reserved connection or a transaction sends its next statement after the server closed the
//   connection; the TypeError is thrown from a timer, no promise can catch it, and the process ends.
// - A statement given to a pooled connection between its socket's error (a reset) and its close is
//   never answered, or is resolved with no rows by the next session's first ReadyForQuery (a group
//   commit that stored nothing, an API key not found).
// - A connection reset while it reads the server's array types (the first thing a new connection
//   does) rejects a promise nobody handles, and the process ends.
// - A statement cancelled part way through its rows (a statement timeout, a cancel) leaves the row
//   count where it stopped: the next statement on that connection answers a run of empty rows
//   before its own.
// - A COPY TO STDOUT whose rows filled its stream's buffer and whose end came in the same read of
//   the socket leaves the socket paused: the next statement on that connection is never answered.

import t from 'tap';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { needs, TEST_DATABASE_URL } from '../support/components.ts';
import { tempDir } from '../support/temp.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'driver-closed-socket.ts');
const patch = readdirSync(join(ROOT, 'patches')).find((f) => f.startsWith('postgres+'));

async function tryDriver(
  moduleDir: string,
  scenario: 'closed' | 'reset' | 'types' | 'rows' | 'copy',
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [FIXTURE, join(moduleDir, 'src', 'index.js'), TEST_DATABASE_URL!, scenario], {
      cwd: ROOT,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** A copy of the installed driver with the patch taken back out. */
async function unpatched(): Promise<string> {
  const dir = tempDir('unpatched-driver-');
  mkdirSync(join(dir, 'node_modules'));
  cpSync(join(ROOT, 'node_modules', 'postgres'), join(dir, 'node_modules', 'postgres'), { recursive: true });
  // The patch's paths start at node_modules/, so it is taken back out of the copy from its parent.
  await run('git', ['apply', '--reverse', join(ROOT, 'patches', patch!)], { cwd: dir });
  return join(dir, 'node_modules', 'postgres');
}

t.test('a connection closed under a reserved connection or a transaction', { skip: needs('postgres') }, async (t) => {
  t.ok(patch, 'the driver patch is in patches/');

  await t.test('without the patch the driver throws from its write timer and the process ends', async (t) => {
    const result = await tryDriver(await unpatched(), 'closed');
    t.not(result.code, 0, 'the process ended with a failure');
    t.match(result.stderr, /TypeError: Cannot read properties of null \(reading 'write'\)/, "with the driver's TypeError");
    t.match(result.stderr, /nextWrite/, 'from nextWrite');
    t.equal(result.stdout, '', 'before any statement could settle');
  });

  await t.test('with the patch every statement settles with CONNECTION_CLOSED and the pool goes on', async (t) => {
    const result = await tryDriver(join(ROOT, 'node_modules', 'postgres'), 'closed');
    t.equal(result.code, 0, `the process finished (${result.stderr.slice(0, 500)})`);
    t.same(JSON.parse(result.stdout), {
      reserved_first: 'CONNECTION_CLOSED',
      reserved_second: 'CONNECTION_CLOSED',
      transaction: 'CONNECTION_CLOSED',
      pool_after: 'ok',
    });
  });
});

t.test('a pooled connection reset while statements keep arriving', { skip: needs('postgres') }, async (t) => {
  await t.test('without the patch a statement sent between the error and the close is never answered right', async (t) => {
    const result = await tryDriver(await unpatched(), 'reset');
    t.equal(result.code, 0, `the process finished (${result.stderr.slice(0, 500)})`);
    t.not(JSON.parse(result.stdout).wrong, 'none', `some statement hung or answered no row (${result.stdout.trim()})`);
  });

  await t.test('with the patch every statement answers its row or fails with the connection', async (t) => {
    const result = await tryDriver(join(ROOT, 'node_modules', 'postgres'), 'reset');
    t.equal(result.code, 0, `the process finished (${result.stderr.slice(0, 500)})`);
    const out = JSON.parse(result.stdout);
    t.equal(out.wrong, 'none', `none hung or answered no row (${out.answered} answered)`);
  });
});

t.test('a new connection reset while it reads the array types', { skip: needs('postgres') }, async (t) => {
  await t.test('without the patch an unhandled rejection ends the process', async (t) => {
    const result = await tryDriver(await unpatched(), 'types');
    t.not(result.code, 0, 'the process ended with a failure');
    t.match(result.stderr, /ECONNRESET/, 'on the reset');
    t.equal(result.stdout, '', 'before the statement settled');
  });

  await t.test('with the patch the statement fails with the reset and the next one is answered', async (t) => {
    const result = await tryDriver(join(ROOT, 'node_modules', 'postgres'), 'types');
    t.equal(result.code, 0, `the process finished (${result.stderr.slice(0, 500)})`);
    t.same(JSON.parse(result.stdout), { first: 'ECONNRESET', second: 'ok' });
  });
});

t.test('a statement cancelled part way through its rows, then the next one', { skip: needs('postgres') }, async (t) => {
  await t.test('without the patch the next statement answers empty rows before its own', async (t) => {
    const result = await tryDriver(await unpatched(), 'rows');
    const out = JSON.parse(result.stdout);
    t.equal(out.cancelled, '57014', 'the first was cancelled by its statement timeout');
    t.not(out.next_rows, '1', `select 1 answered ${out.next_rows} rows`);
  });

  await t.test('with the patch the next statement answers its one row', async (t) => {
    const result = await tryDriver(join(ROOT, 'node_modules', 'postgres'), 'rows');
    t.same(JSON.parse(result.stdout), { cancelled: '57014', next_rows: '1', next_first: '{"one":1}' });
  });
});

t.test('a COPY TO STDOUT read to its end, then the next statement', { skip: needs('postgres') }, async (t) => {
  await t.test('without the patch the next statement is never answered', async (t) => {
    const result = await tryDriver(await unpatched(), 'copy');
    t.match(JSON.parse(result.stdout).next, /^unsettled after 5 s/, `a statement after a COPY was never answered (${result.stdout.trim()})`);
  });

  await t.test('with the patch it is', async (t) => {
    const result = await tryDriver(join(ROOT, 'node_modules', 'postgres'), 'copy');
    t.same(JSON.parse(result.stdout), { next: 'ok' }, 'every COPY read whole, every statement after it answered');
  });
});
