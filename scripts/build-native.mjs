// Builds the native addon (native/, Rust, napi-rs) in release mode; run by `npm ci` (postinstall).
//
// LightGBM is compiled from source inside the build (crate lightgbm3-sys), which needs CMake ≥ 3.28
// and libclang (for bindgen). This script checks those first so that a missing tool gives one clear
// line with the fix, not a page of cargo output.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const debug = process.argv.includes('--debug');

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

const cmake = process.env.CMAKE || 'cmake';
const cmakeOut = version(cmake, ['--version']);
const match = cmakeOut && /cmake version (\d+)\.(\d+)/.exec(cmakeOut);
if (!match) {
  fail('CMake was not found.', "install CMake >= 3.28, e.g. `python3 -m pip install 'cmake>=3.28,<4'`.");
}
const [major, minor] = [Number(match[1]), Number(match[2])];
if (major < 3 || (major === 3 && minor < 28)) {
  fail(
    `CMake ${major}.${minor} is too old: LightGBM 4.7 needs 3.28 or newer (Debian 12 ships 3.25).`,
    "`python3 -m pip install 'cmake>=3.28,<4'` (it goes first on PATH), or set CMAKE to a newer cmake binary.",
  );
}

const libclang = ['/usr/lib/llvm-14/lib', '/usr/lib/llvm-15/lib', '/usr/lib/llvm-16/lib', '/usr/lib/x86_64-linux-gnu', '/usr/lib64', '/usr/local/lib'];
if (process.platform === 'linux' && !process.env.LIBCLANG_PATH) {
  const found = libclang.some((dir) => existsSync(dir) && spawnSync('sh', ['-c', `ls ${dir}/libclang*.so* >/dev/null 2>&1`]).status === 0);
  if (!found) {
    fail('libclang was not found (bindgen needs it to read LightGBM\'s C header).', '`apt-get install clang libclang-dev` (Debian/Ubuntu), or set LIBCLANG_PATH.');
  }
}

const args = ['napi', 'build', '--platform', '--manifest-path', 'native/Cargo.toml', '--package-json-path', 'package.json', '--output-dir', 'native', '--esm', '--js', 'index.js', '--dts', 'index.d.ts'];
if (!debug) args.push('--release');
const result = spawnSync('npx', args, { stdio: 'inherit' });
process.exit(result.status ?? 1);
