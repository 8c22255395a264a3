// `npm start`: runs the service from its compiled JavaScript (dist/, `npm run build:server`), as in
// production, not through a TypeScript loader at run time (which costs memory and re-names closures
// on every call). If any source under src/ is newer than the last build (a developer edited it),
// it compiles first (incremental, a few seconds), so `npm start` never runs stale code.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.tsbuildinfo');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : entry.name.endsWith('.ts') ? statSync(path).mtimeMs : 0);
  }
  return newest;
}

const built = existsSync(stamp) && existsSync(join(root, 'dist', 'main.js'));
if (!built || newestSource(join(root, 'src')) > statSync(stamp).mtimeMs) {
  process.stderr.write('compiling src/ to dist/ (npm run build:server)…\n');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  // An incremental build that found nothing to emit leaves the stamp as it was: mark it current.
  const now = new Date();
  utimesSync(stamp, now, now);
}

await import(pathToFileURL(join(root, 'dist', 'main.js')).href);
