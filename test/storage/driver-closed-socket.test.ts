// The database driver's defect and the patch that fixes it at install (patches/postgres+*.patch,
// applied by patch-package in postinstall). postgres.js 3.4.9 writes to a socket that its close
// handler has already set to null when a reserved connection or a transaction sends its next
// statement after the server closed the connection; the TypeError is thrown from a timer, no
// promise can catch it, and the process ends. test/fixtures/driver-closed-socket.ts runs those
// statements through a proxy that closes the connections cleanly, once with the driver as installed
// (patched) and once with a copy that has the patch taken back out: the copy must still crash (else
// the patch is no longer needed: see docs/operating.md, "The database driver's patch"), and the
// installed driver must settle every statement with CONNECTION_CLOSED and keep its pool usable.

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

async function tryDriver(moduleDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', FIXTURE, join(moduleDir, 'src', 'index.js'), TEST_DATABASE_URL!], { cwd: ROOT, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

t.test('a connection closed under a reserved connection or a transaction', { skip: needs('postgres') }, async (t) => {
  t.ok(patch, 'the driver patch is in patches/');

  await t.test('without the patch the driver throws from its write timer and the process ends', async (t) => {
    const dir = tempDir('unpatched-driver-');
    mkdirSync(join(dir, 'node_modules'));
    cpSync(join(ROOT, 'node_modules', 'postgres'), join(dir, 'node_modules', 'postgres'), { recursive: true });
    // The patch's paths start at node_modules/, so it is taken back out of the copy from its parent.
    await run('git', ['apply', '--reverse', join(ROOT, 'patches', patch!)], { cwd: dir });
    const result = await tryDriver(join(dir, 'node_modules', 'postgres'));
    t.not(result.code, 0, 'the process ended with a failure');
    t.match(result.stderr, /TypeError: Cannot read properties of null \(reading 'write'\)/, "with the driver's TypeError");
    t.match(result.stderr, /nextWrite/, 'from nextWrite');
    t.equal(result.stdout, '', 'before any statement could settle');
  });

  await t.test('with the patch every statement settles with CONNECTION_CLOSED and the pool goes on', async (t) => {
    const result = await tryDriver(join(ROOT, 'node_modules', 'postgres'));
    t.equal(result.code, 0, `the process finished (${result.stderr.slice(0, 500)})`);
    t.same(JSON.parse(result.stdout), {
      reserved_first: 'CONNECTION_CLOSED',
      reserved_second: 'CONNECTION_CLOSED',
      transaction: 'CONNECTION_CLOSED',
      pool_after: 'ok',
    });
  });
});
