// The service against its own OpenAPI reference: schemathesis (PyPI) runs every check, 50 examples
// per operation with a fixed seed and no example database (nothing carries over between runs, and
// its working files go to a temporary directory), against the real server on loopback with sign-in
// configured through a stand-in identity provider, signed in (session cookie and CSRF token) and
// with an API key of an organization, and must report no failure: every status documented, every declared
// constraint enforced, no schema-valid request refused, 405 with Allow for other methods.
// CI installs schemathesis (.ci/run); without it the test is skipped with a message, except under
// CI, where a missing tool is a failure.

import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { start, tempDir } from './helpers.ts';
import { IdentityProvider, makeKey, signWith } from '../auth/idp.ts';

// Through the Python that has it, so no PATH entry for its script is needed.
const PYTHON = process.env.PYTHON ?? 'python3';
const ST = ['-m', 'schemathesis.cli'];
const available = spawnSync(PYTHON, [...ST, '--version'], { encoding: 'utf8' }).status === 0;
if (!available && process.env.CI === 'true') throw new Error(`CI=true but schemathesis is not installed for ${PYTHON}: .ci/run installs it from PyPI`);

t.test('schemathesis finds no disagreement between the service and its reference', { skip: available ? false : `schemathesis is not installed (python3 -m pip install 'schemathesis>=4.3,<5'), so the conformance run is skipped` }, async (t) => {
  const idp = await new IdentityProvider().start();
  t.teardown(() => idp.close());
  const key = await makeKey('ES256', 'es-1');
  idp.published = [key];
  const running = await start({ overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'conformance-session-secret-0123456789abcdef', authConfigured: true } });
  t.teardown(() => running.close());
  await running.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(running.app.server.address() as { port: number }).port}`;

  const signIn = await fetch(`${base}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ access_token: await signWith(key, idp.issuer, { sub: 'user-ana', email: 'ana@example.com' }) }) });
  t.equal(signIn.status, 200, 'signed in');
  const cookie = signIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const csrf = /service_csrf=([^;]+)/.exec(cookie)![1]!;
  const asAna = { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' };
  const org = await (await fetch(`${base}/api/organizations`, { method: 'POST', headers: asAna, body: JSON.stringify({ name: 'Conformance', stage: 'test' }) })).json();
  const apiKey = await (await fetch(`${base}/api/organizations/${org.id}/api-keys`, { method: 'POST', headers: asAna, body: JSON.stringify({ name: 'schemathesis' }) })).json();
  t.ok(apiKey.secret, 'an API key for the /api/v1 surface');

  // Asynchronously: the server answering schemathesis runs on this process's event loop.
  const args = ['--config-file', join(import.meta.dirname, 'schemathesis', 'schemathesis.toml'), 'run', `${base}/api/docs/json`, '--checks', 'all', '--max-examples', '50', '--seed', '1', '--workers', '1', '--generation-database', 'none', '-H', `Cookie: ${cookie}`, '-H', `X-CSRF-Token: ${csrf}`, '-H', `Authorization: Bearer ${apiKey.secret}`];
  const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(PYTHON, [...ST, ...args], { cwd: tempDir('schemathesis-'), env: { ...process.env, NO_COLOR: '1' }, timeout: 600_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  const summary = run.stdout.split('\n').filter((l) => /failure|error|passed|warning/i.test(l) && /=====/.test(l));
  t.equal(run.status, 0, `schemathesis exits 0: ${summary.join(' ') || run.stderr.slice(-500)}`);
  t.notMatch(run.stdout, /^Failures:/m, 'no failures');
  t.notMatch(run.stdout, /^Errors:/m, 'no errors');
  if (run.status !== 0) t.comment(run.stdout.slice(-6000));
});
