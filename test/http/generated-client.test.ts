// A client generated from the OpenAPI reference works, as an integrator would make and use one: a
// server on loopback (embedded database, sign-in through a stand-in identity provider, an
// organization with an API key); its /api/docs/json through openapi-typescript (the CLI) into a
// .d.ts; a small client on openapi-fetch that scores with the key (POST /api/v1/risk/score),
// type-checked with `tsc --strict` against those types (and a wrong body refused by the compiler,
// so the types are real, not `any`), then run with tsx: it gets a score, and the transaction is
// recorded. Everything runs in a temporary directory (its node_modules a link to the project's),
// removed at the end; every child process is awaited, and killed if it outlives its time.

import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../support/server.ts';
import { startLive } from '../support/accounts.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const children = new Set<ChildProcess>();
t.teardown(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Runs a command to its end (asynchronously: the server under test shares this event loop). */
function run(command: string, args: string[], o: { cwd: string; env?: Record<string, string> }): Promise<{ status: number | null; out: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: o.cwd, env: { ...process.env, NO_COLOR: '1', ...o.env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    children.add(child);
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    child.stderr!.on('data', (c) => (out += c));
    child.on('error', fail);
    child.on('close', (status) => {
      children.delete(child);
      done({ status, out });
    });
  });
}

/** The strictest check an integrator would run, on the given files alone. */
const typecheck = (dir: string, files: string[]) =>
  run(
    process.execPath,
    [TSC, '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', ...files],
    { cwd: dir },
  );

const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths>({ baseUrl: process.env.BASE_URL! });
const { data, error, response } = await client.POST('/api/v1/risk/score', {
  headers: { Authorization: \`Bearer \${process.env.API_KEY}\` },
  body: { amount: 42.5, customer_id: 'C-generated', merchant_id: 'M-generated', transaction_id: 'generated-1', explain: false },
});
if (error) {
  console.log(JSON.stringify({ status: response.status, error }));
  process.exit(1);
}
// Typed fields: the compiler knows them from the reference.
const score: number = data.risk_score;
const decision: 'approve' | 'review' | 'block' = data.decision;
const transaction: string = data.transaction_id;
console.log(JSON.stringify({ status: response.status, score, decision, transaction, requestId: response.headers.get('request-id') }));
`;

const WRONG = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' });
await client.POST('/api/v1/risk/score', { body: { amount: 'lots', customer_id: 'C', merchant_id: 'M' } });
`;

t.test('a client generated from the reference scores with an API key', async (t) => {
  const live = await startLive({ backend: { name: 'pglite' } });
  t.teardown(() => live.close());
  const org = await live.organization('Generated');
  await live.s.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(live.s.app.server.address() as { port: number }).port}`;

  const dir = tempDir('generated-client-');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const reference = await fetch(`${base}/api/docs/json`);
  t.equal(reference.status, 200, 'the reference is served');
  writeFileSync(join(dir, 'openapi.json'), await reference.text());

  const generated = await run(BIN('openapi-typescript'), ['openapi.json', '--output', 'api.d.ts'], { cwd: dir });
  t.equal(generated.status, 0, `openapi-typescript makes the types: ${generated.out.slice(-2000)}`);

  // Both files in one compiler run (each run loads the generated types, most of its time): the
  // client passes, the wrong body is pointed at.
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  writeFileSync(join(dir, 'wrong.ts'), WRONG);
  const checked = await typecheck(dir, ['client.ts', 'wrong.ts']);
  t.notMatch(checked.out, /client\.ts\(/, `the client type-checks with --strict: ${checked.out.slice(-3000)}`);
  t.not(checked.status, 0, 'a body of the wrong shape does not');
  const column = WRONG.split('\n')[4]!.indexOf('amount') + 1;
  t.match(
    checked.out,
    new RegExp(`wrong\\.ts\\(5,${column}\\): error TS2322: Type 'string' is not assignable to type 'number'`),
    `the compiler points at amount: ${checked.out.slice(0, 600)}`,
  );
  t.equal(checked.out.match(/error TS/g)?.length, 1, 'and at nothing else');

  const ran = await run(process.execPath, ['client.ts'], { cwd: dir, env: { BASE_URL: base, API_KEY: org.key } });
  t.equal(ran.status, 0, `the client runs: ${ran.out.slice(-2000)}`);
  const answer = JSON.parse(ran.out.trim().split('\n').pop()!);
  t.equal(answer.status, 200);
  t.ok(answer.score > 0 && answer.score < 1, `a score (${answer.score})`);
  t.ok(['approve', 'review', 'block'].includes(answer.decision), `a decision (${answer.decision})`);
  t.equal(answer.transaction, 'generated-1');
  t.match(answer.requestId, /^req_/, 'the answer has a request id');
  const recorded = await live.s.app.inject({ url: '/api/v1/transactions/generated-1', headers: { authorization: `Bearer ${org.key}` } });
  t.equal(recorded.statusCode, 200, "the score was recorded in the key's organization");
});
