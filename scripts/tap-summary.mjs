// `npm run test:js`: tap, as it is (its arguments passed on), and then, when something failed, a
// summary of what did: each failed assertion with the subtests it sits in. A CI log often keeps
// only its end; without this the end says how many failed and not which.
// Every process the tests start (tap's, servers, command lines) shares Node's compile cache: each
// loads the TypeScript sources, and the cache spares them stripping and compiling them again.

import { spawn, spawnSync } from 'node:child_process';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

// tap rebuilds its Test class when the configured plugins differ from those it was built with (a
// fresh install has every default plugin, the TypeScript one among them, which .taprc turns off), but
// the run that rebuilds still starts every test process with the old plugins' loaders: on a fresh
// clone the whole suite ran through tsx, about a third more CPU (tapjs/tapjs#974). So the Test class
// is rebuilt first when its plugins are not the configured ones.
const config = await TapConfig.load();
if (config.pluginSignature !== signature) {
  const built = spawnSync('tap', ['build'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const env = { NODE_COMPILE_CACHE: fileURLToPath(new URL('../node_modules/.cache/node-compile', import.meta.url)), ...process.env };
const child = spawn('tap', process.argv.slice(2), { stdio: ['inherit', 'pipe', 'inherit'], shell: false, env });
/** The names of the subtests open at each indentation (four spaces a level), and how many failures
 *  had been listed when each began. */
const open = [];
const listedBefore = [];
const failed = [];
const lines = createInterface({ input: child.stdout });
const read = new Promise((resolve) => lines.once('close', resolve));
lines.on('line', (line) => {
  process.stdout.write(`${line}\n`);
  const subtest = /^( *)# Subtest: (.*)$/.exec(line);
  if (subtest) {
    const depth = subtest[1].length / 4;
    open.length = depth;
    open[depth] = subtest[2];
    listedBefore[depth] = failed.length;
    return;
  }
  const bad = /^( *)not ok \d+ - (.*?)(?: # time=.*)?$/.exec(line);
  if (!bad) return;
  const depth = bad[1].length / 4;
  // A subtest's own "not ok" repeats what failed within it, when that was listed: only leaves are.
  if (open[depth] === bad[2] && failed.length > listedBefore[depth]) return;
  failed.push([...open.slice(0, depth), bad[2]].join(' › '));
});
const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await read;
if (failed.length > 0) {
  process.stdout.write(`\n# ${failed.length} failed:\n`);
  for (const f of failed) process.stdout.write(`#   ${f}\n`);
}
process.exitCode = code;
