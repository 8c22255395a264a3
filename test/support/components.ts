// What a test needs from the machine beyond Node and the addon, asked in one place. `needs(x)` is a
// tap `skip` value: false when the component is there; when it is missing, a reason to skip it
// outside CI, and under CI (CI=true) a thrown error that fails the test file, so a test never
// passes, or is counted as skipped, without running where CI promised the component.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Component = 'postgres' | 'own-postgres' | 'chromium' | 'schemathesis' | 'tmpfs' | 'podman';

/** The shared test server (TEST_DATABASE_URL), when one is given. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

/** The bin directory of the newest installed PostgreSQL with initdb and pg_ctl, if any. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] && join(root, versions[0], 'bin');
}

/** Debian's Chromium, where it is installed. */
export const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/** The Python that runs schemathesis (PYTHON, else python3). */
export const PYTHON = process.env.PYTHON ?? 'python3';

function schemathesisInstalled(): boolean {
  try {
    execFileSync(PYTHON, ['-m', 'schemathesis.cli', '--version'], { stdio: 'ignore', timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}

/** Whether a program answers `--version` (on PATH and working). */
function answers(program: string): boolean {
  try {
    execFileSync(program, ['--version'], { stdio: 'ignore', timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}

/** What the container test lacks of Podman and what it makes images with, listed; empty when all
 *  is there. The stand-in Rust image copies this machine's toolchain (rustc). */
function containerToolsMissing(): string[] {
  const tools: [string, string][] = [
    ['podman', 'apt-get install podman runc'],
    ['mmdebstrap', 'apt-get install mmdebstrap'],
    ['podman-compose', "python3 -m pip install 'podman-compose>=1.5,<2'"],
    ['rustc', 'rustup (https://rustup.rs)'],
  ];
  return tools.filter(([program]) => !answers(program)).map(([program, fix]) => `${program} (${fix})`);
}

/** Whether this process may mount a small tmpfs (root with CAP_SYS_ADMIN: the full-disk tests). */
function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  const dir = mkdtempSync(join(tmpdir(), 'tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore', timeout: 10_000 });
    execFileSync('umount', [dir], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Why a component is missing, with what installs it; undefined when it is there. */
function missing(component: Component): string | undefined {
  switch (component) {
    case 'postgres':
      return TEST_DATABASE_URL
        ? undefined
        : 'needs a PostgreSQL server: set TEST_DATABASE_URL (e.g. postgres://user:password@127.0.0.1:5432/db; .ci/run sets one up)';
    case 'own-postgres':
      if (!postgresBinDir()) return "needs PostgreSQL's server programs (initdb, pg_ctl under /usr/lib/postgresql/<version>/bin): apt-get install postgresql";
      // PostgreSQL will not run as root: under root it runs as the postgres user, which must exist.
      if (
        process.getuid?.() === 0 &&
        !readFileSync('/etc/passwd', 'utf8')
          .split('\n')
          .some((l) => l.startsWith('postgres:'))
      ) {
        return 'runs PostgreSQL as the `postgres` user when root, and there is none: apt-get install postgresql';
      }
      return undefined;
    case 'chromium':
      return CHROMIUM ? undefined : 'needs Chromium: apt-get install chromium';
    case 'tmpfs':
      return canMountTmpfs() ? undefined : 'mounts a small tmpfs to fill a disk: run as root with the right to mount (CAP_SYS_ADMIN)';
    case 'podman': {
      const lacking = containerToolsMissing();
      if (lacking.length > 0) return `builds and runs containers with Podman; missing: ${lacking.join(', ')} (.ci/run installs them)`;
      // Podman as root; rootless Podman needs a setup of its own (subordinate ids) this test does not make.
      return process.getuid?.() === 0 ? undefined : 'runs Podman as root (the container test makes images from Debian packages with mmdebstrap)';
    }
    case 'schemathesis':
      return schemathesisInstalled() ? undefined : "needs schemathesis: python3 -m pip install 'schemathesis>=4.32,<5'";
  }
}

/** A tap `skip` option for a test that needs these components (see the header). */
export function needs(...components: Component[]): false | string {
  const reasons = components.map(missing).filter((r): r is string => r !== undefined);
  if (reasons.length === 0) return false;
  const reason = reasons.join('; ');
  if (process.env.CI === 'true') throw new Error(`CI=true but a component this test needs is missing: ${reason}`);
  return reason;
}
