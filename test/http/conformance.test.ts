// The service against its own OpenAPI reference: schemathesis (PyPI) runs every check, 10 examples
// per operation besides its coverage phase's boundary values (without sign-in: 10 and no coverage
// phase) with a fixed seed and no example database (nothing carries over between runs, and its
// working files go to a temporary directory), against the real server on loopback.
// - With sign-in configured through a stand-in identity provider, signed in (session cookie and CSRF
//   token) and with an API key of an organization: no failure at all. Every status documented, every
//   declared constraint enforced, no schema-valid request refused, 405 with Allow for other methods.
// - Without sign-in: the only failures are its server-error check on the documented 503
//   `auth_not_configured` answers of the account routes (it flags every 5xx).
// CI installs schemathesis (.ci/run); without it the test is skipped with a message, except under
// CI, where a missing tool is a failure.

import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { start, tempDir } from '../support/server.ts';
import { IdentityProvider, makeKey, signWith } from '../support/idp.ts';
import { needs, PYTHON } from '../support/components.ts';

const ST = ['-m', 'schemathesis.cli'];
const SKIP = needs('schemathesis');
// Every operation of the reference gets its examples, so this file's time grows with the API: it
// may take twice the suite's five minutes on a host the other files keep busy.
t.setTimeout(600_000);

/** Runs every check against the reference the server at `base` serves, sending `headers`. */
async function schemathesis(
  base: string,
  headers: string[],
  examples: number,
  phases = 'examples,coverage,fuzzing,stateful',
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const args = [
    '--config-file',
    join(import.meta.dirname, 'schemathesis', 'schemathesis.toml'),
    'run',
    `${base}/api/docs/json`,
    '--checks',
    'all',
    '--max-examples',
    String(examples),
    '--seed',
    '1',
    '--workers',
    '1',
    '--phases',
    phases,
    '--generation-database',
    'none',
    ...headers.flatMap((h) => ['-H', h]),
  ];
  // Asynchronously: the server answering schemathesis runs on this process's event loop.
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [...ST, ...args], { cwd: tempDir('schemathesis-'), env: { ...process.env, NO_COLOR: '1' }, timeout: 600_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The failure kinds of the summary (`ST101`, ...), with their counts. */
function failureKinds(stdout: string): Map<string, number> {
  const block = /^Failures:\n((?:\s+\S.*\n)+)/m.exec(stdout)?.[1] ?? '';
  return new Map([...block.matchAll(/(ST\d+)[^:\n]*:\s*(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

async function listening(running: Awaited<ReturnType<typeof start>>): Promise<string> {
  await running.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(running.app.server.address() as { port: number }).port}`;
}

t.test('with sign-in configured: schemathesis finds no disagreement between the service and its reference', { skip: SKIP }, async (t) => {
  const idp = await new IdentityProvider().start();
  t.teardown(() => idp.close());
  const key = await makeKey('ES256', 'es-1');
  idp.published = [key];
  const running = await start({
    overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'conformance-session-secret-0123456789abcdef', authConfigured: true },
  });
  t.teardown(() => running.close());
  const base = await listening(running);

  const signIn = await fetch(`${base}/api/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ access_token: await signWith(key, idp.issuer, { sub: 'user-ana', email: 'ana@example.com' }) }),
  });
  t.equal(signIn.status, 200, 'signed in');
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /service_csrf=([^;]+)/.exec(cookie)![1]!;
  const asAna = { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' };
  const org = await (
    await fetch(`${base}/api/organizations`, { method: 'POST', headers: asAna, body: JSON.stringify({ name: 'Conformance', stage: 'test' }) })
  ).json();
  const apiKey = await (
    await fetch(`${base}/api/organizations/${org.id}/api-keys`, { method: 'POST', headers: asAna, body: JSON.stringify({ name: 'schemathesis' }) })
  ).json();
  t.ok(apiKey.secret, 'an API key for the /api/v1 surface');

  const run = await schemathesis(base, [`Cookie: ${cookie}`, `X-CSRF-Token: ${csrf}`, `Authorization: Bearer ${apiKey.secret}`], 10);
  const summary = run.stdout.split('\n').filter((l) => /failure|error|passed|warning/i.test(l) && /=====/.test(l));
  t.equal(run.status, 0, `schemathesis exits 0: ${summary.join(' ') || run.stderr.slice(-500)}`);
  t.notMatch(run.stdout, /^Failures:/m, 'no failures');
  t.notMatch(run.stdout, /^Errors:/m, 'no errors');
  if (run.status !== 0) t.comment(run.stdout.slice(-6000));
});

t.test('without sign-in: the only failures are the server-error check on the documented 503 auth_not_configured', { skip: SKIP }, async (t) => {
  const running = await start();
  t.teardown(() => running.close());
  t.equal(running.service.config.authConfigured, false, 'sign-in is not configured');
  // Fewer examples and no coverage phase (its boundary values are the signed-in run's): what this
  // run checks (which answers fail, and why) shows on the first cases of each operation.
  const run = await schemathesis(await listening(running), [], 10, 'examples,fuzzing,stateful');
  t.notMatch(run.stdout, /^Errors:/m, 'no errors');
  t.same([...failureKinds(run.stdout).keys()], ['ST101'], 'server errors only (ST101)');
  // Each failure shows its answer: a status line, then the body.
  const answers = [...run.stdout.matchAll(/^\[(\d{3})\][^\n]*\n\s*\n\s*`([^\n]*)`/gm)];
  t.ok(answers.length > 0, 'the failures show their answers');
  t.equal(answers.length, failureKinds(run.stdout).get('ST101'), 'one answer per failure');
  for (const [, status, body] of answers) {
    if (status !== '503' || !body!.includes('"reason":"auth_not_configured"')) t.fail(`an unexpected answer: ${status} ${body}`);
  }
  t.pass(`every one is 503 auth_not_configured (${answers.length})`);
  if (run.status === 0 || failureKinds(run.stdout).size !== 1) t.comment(run.stdout.slice(-6000));
});
