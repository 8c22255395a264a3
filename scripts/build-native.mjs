// Builds the native addon (native/, Rust, napi-rs) in release mode (--debug: without optimisation).
// Without arguments (as `npm ci` runs it): the serving addon, native/engine.<platform>.node with
// native/index.js and index.d.ts. It needs Rust and nothing else: LightGBM is not compiled in.
// With --lightgbm: the same addon with LightGBM linked (the crate's `lightgbm` feature), into
// native/lightgbm/, for training, the parity tests and the engine benchmark (src/addon/lightgbm.ts builds
// it on first use). LightGBM is compiled from source (crate lightgbm3-sys), which needs CMake ≥ 3.28
// and libclang (for bindgen); they are checked first, so that a missing tool gives one clear line
// with the fix, not a page of cargo output. It has its own cargo target directory, so that switching
// between the two builds never recompiles either.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const debug = process.argv.includes('--debug');
const lightgbm = process.argv.includes('--lightgbm');

function fail(message, fix) {
  console.error(`\nbuild:native: ${message}\n  fix: ${fix}\n`);
  process.exit(1);
}

function version(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

if (!version('cargo', ['--version'])) {
  fail('cargo (Rust) was not found on PATH.', 'install Rust with rustup (https://rustup.rs), then re-run `npm ci`.');
}

function checkLightgbmPrerequisites() {
  const why = 'the LightGBM-enabled addon (training, parity tests, bench:engine) compiles LightGBM from source';
  const cmake = process.env.CMAKE || 'cmake';
  const cmakeOut = version(cmake, ['--version']);
  const match = cmakeOut && /cmake version (\d+)\.(\d+)/.exec(cmakeOut);
  if (!match) {
    fail(`CMake was not found (${cmake}); ${why}.`, "install CMake >= 3.28, e.g. `python3 -m pip install 'cmake>=3.28,<4'`, or set CMAKE to a cmake binary.");
  }
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major < 3 || (major === 3 && minor < 28)) {
    fail(
      `CMake ${major}.${minor} is too old: LightGBM 4.7 needs 3.28 or newer (Debian 12 ships 3.25).`,
      "`python3 -m pip install 'cmake>=3.28,<4'` (it goes first on PATH), or set CMAKE to a newer cmake binary.",
    );
  }
  const libclang = [
    '/usr/lib/llvm-14/lib',
    '/usr/lib/llvm-15/lib',
    '/usr/lib/llvm-16/lib',
    '/usr/lib/llvm-17/lib',
    '/usr/lib/llvm-18/lib',
    '/usr/lib/x86_64-linux-gnu',
    '/usr/lib64',
    '/usr/local/lib',
  ];
  if (process.platform === 'linux' && !process.env.LIBCLANG_PATH) {
    const found = libclang.some((dir) => existsSync(dir) && spawnSync('sh', ['-c', `ls ${dir}/libclang*.so* >/dev/null 2>&1`]).status === 0);
    if (!found) {
      fail(
        `libclang was not found (bindgen reads LightGBM's C header with it); ${why}.`,
        '`apt-get install clang libclang-dev` (Debian/Ubuntu), or set LIBCLANG_PATH.',
      );
    }
  }
}

// `--no-const-enum`: the crate's string enums (the engine's error codes, the kinds and directions of
// a reason) are written into index.d.ts as unions of their names, types TypeScript checks plain
// strings against, rather than as `const enum`s, which type stripping cannot compile.
const args = [
  'napi',
  'build',
  '--platform',
  '--manifest-path',
  'native/Cargo.toml',
  '--package-json-path',
  'package.json',
  '--dts',
  'index.d.ts',
  '--no-const-enum',
];
if (lightgbm) {
  checkLightgbmPrerequisites();
  // No JavaScript loader: src/addon/lightgbm.ts loads the binary itself, typed by the service build's
  // index.d.ts (the same interface).
  args.push('--features', 'lightgbm', '--no-js', '--output-dir', 'native/lightgbm', '--target-dir', `${root}native/target/lightgbm`);
} else {
  args.push('--esm', '--js', 'index.js', '--output-dir', 'native');
}
if (!debug) args.push('--release');
const result = spawnSync('npx', args, { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
