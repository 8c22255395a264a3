// What the HTTP and batch benchmarks share: the real server started as `npm start` starts it
// (scripts/start.mjs, compiled JavaScript) in its own process on a loopback port with a fresh
// embedded database, waiting for its "ready" line; waiting for a line of any child process; and a
// process's memory from /proc.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/support/temp.ts';

export const root = new URL('..', import.meta.url).pathname;

/** Resolves with the first match of `pattern` in the child's output; rejects if it exits first. */
export function waitFor(child: ChildProcess, pattern: RegExp, stream: 'stdout' | 'stderr', timeoutMs = 180_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}: ${text.slice(-500)}`)), timeoutMs);
    child[stream]!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = text.match(pattern);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.on('exit', (code) => reject(new Error(`process exited (${code}) before ${pattern}: ${text.slice(-500)}`)));
  });
}

/** The Node options `npm start` passes (package.json's `start` script), so the benchmarks run the
 *  server exactly as it is started in production. */
export function startFlags(): string[] {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const m = /^node\s+(.*?)\s*scripts\/start\.mjs$/.exec(script);
  if (!m) throw new Error(`package.json's start script is not "node [options] scripts/start.mjs": ${script}`);
  return m[1]!.split(/\s+/).filter(Boolean);
}

/** The service with a fresh embedded database, ready: its process, URL and start-up steps (ms). */
/** Servers this process started: stopped when it exits, however it exits, so that a benchmark
 *  that throws part way never leaves its server running. */
const started: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** BENCH_SERVER_NODE_ARGS: extra Node options for a benchmark's server only (e.g. `--cpu-prof`,
 *  which NODE_OPTIONS refuses), to profile the server under the benchmark's load. */
export function serverNodeArgs(): string[] {
  return (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/** `from`: another checkout to run the server of (built with `npm run build:server`), for a
 *  benchmark that compares a change with the version before it on the same host at once. */
export async function startServer(
  env: Record<string, string>,
  from = root,
): Promise<{ child: ChildProcess; url: string; startup: Record<string, number>; stderr: () => string }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [...startFlags(), ...serverNodeArgs(), join(from, 'scripts/start.mjs')], {
    cwd: from,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: tempDir('bench-'), DATABASE_URL: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ready = await waitFor(child, /ready on .* start-up steps ms: (\{.*\})/, 'stderr');
  return { child, url: `http://127.0.0.1:${port}`, startup: JSON.parse(ready[1]!) as Record<string, number>, stderr: () => stderr };
}

/** Stops a server as an operator does (SIGTERM) and waits for it to exit (SIGKILL after
 *  `timeoutMs`), so that what it writes at exit (a `--cpu-prof` profile) is written. */
export async function stopServer(child: ChildProcess, timeoutMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

/** Starts a new peak-memory measurement of a process (Linux: clears VmHWM down to the current
 *  resident size); false where that is not possible (then VmHWM is the peak since the start). */
export function resetPeakMemory(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Resident (VmRSS) or peak resident (VmHWM) memory of a process, MB. */
export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)![1]) / 1024);
}

/** How many threads a process has (/proc). */
export function threadsOf(pid: number): number {
  return Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}
