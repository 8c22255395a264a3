// Runs schemathesis (all checks, seed 1, default examples) signed in against a server whose log goes to a file.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { start, tempDir } from '/work/main/test/support/server.ts';
import { IdentityProvider, makeKey, signWith } from '/work/main/test/support/idp.ts';
const idp = await new IdentityProvider().start();
const key = await makeKey('ES256', 'es-1');
idp.published = [key];
const logFile = createWriteStream('/tmp/st/server.log');
const running = await start({ overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'conformance-session-secret-0123456789abcdef', authConfigured: true }, logger: { level: 'info', stream: logFile } });
await running.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(running.app.server.address() as { port: number }).port}`;
const signIn = await fetch(`${base}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ access_token: await signWith(key, idp.issuer, { sub: 'user-ana', email: 'ana@example.com' }) }) });
const cookie = signIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
const csrf = /service_csrf=([^;]+)/.exec(cookie)![1]!;
const asAna = { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' };
const org = await (await fetch(`${base}/api/organizations`, { method: 'POST', headers: asAna, body: JSON.stringify({ name: 'Conformance', stage: 'test' }) })).json();
const apiKey = await (await fetch(`${base}/api/organizations/${org.id}/api-keys`, { method: 'POST', headers: asAna, body: JSON.stringify({ name: 'schemathesis' }) })).json();
const args = ['-m', 'schemathesis.cli', '--config-file', '/work/main/test/http/schemathesis/schemathesis.toml', 'run', `${base}/api/docs/json`, '--checks', 'all', '--seed', '1', '--workers', '1', '--generation-database', 'none', '--include-path-regex', process.argv[2] ?? '.*', '-H', `Cookie: ${cookie}`, '-H', `X-CSRF-Token: ${csrf}`, '-H', `Authorization: Bearer ${apiKey.secret}`];
const code = await new Promise((resolve) => {
  const child = spawn('python3', args, { cwd: tempDir('st-'), env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('close', resolve);
});
console.log('schemathesis exit', code);
await running.close();
await idp.close();
process.exit(0);
