// A configuration that cannot work stops the start with the variable's name and what to do, never
// a stack trace: several server processes without a shared database, an unknown durability.

import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadConfig } from '../../src/config.ts';

t.test('WEB_CONCURRENCY above 1 needs DATABASE_URL', async (t) => {
  t.throws(() => loadConfig({ WEB_CONCURRENCY: '2' }), { code: 'config_invalid' });
  t.throws(() => loadConfig({ WEB_CONCURRENCY: '2' }), /WEB_CONCURRENCY: 2 server processes need DATABASE_URL/);
  t.equal(loadConfig({ WEB_CONCURRENCY: '2', DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/d' }).WEB_CONCURRENCY, 2);
  t.equal(loadConfig({}).WEB_CONCURRENCY, 1, 'one process by default');
});

t.test('DURABILITY is commit by default, or write_behind', async (t) => {
  t.equal(loadConfig({}).DURABILITY, 'commit');
  t.equal(loadConfig({ DURABILITY: 'write_behind' }).DURABILITY, 'write_behind');
  t.throws(() => loadConfig({ DURABILITY: 'sometimes' }), /DURABILITY/);
});

t.test('AUTHPROVIDER_JWKS_URL is an http(s) address, unset when empty', async (t) => {
  t.equal(loadConfig({}).AUTHPROVIDER_JWKS_URL, undefined);
  t.equal(loadConfig({ AUTHPROVIDER_JWKS_URL: '' }).AUTHPROVIDER_JWKS_URL, undefined, 'an empty line in an env file is unset');
  const url = 'http://dev-idp:9999/auth/v1/.well-known/jwks.json';
  t.equal(loadConfig({ AUTHPROVIDER_JWKS_URL: url }).AUTHPROVIDER_JWKS_URL, url);
  t.throws(() => loadConfig({ AUTHPROVIDER_JWKS_URL: 'dev-idp:9999/jwks' }), /AUTHPROVIDER_JWKS_URL/);
  t.throws(() => loadConfig({ AUTHPROVIDER_JWKS_URL: 'file:///etc/passwd' }), /AUTHPROVIDER_JWKS_URL/);
});

t.test('npm start with WEB_CONCURRENCY=2 and no DATABASE_URL says why and exits 1', async (t) => {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, WEB_CONCURRENCY: '2', DATABASE_URL: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = await once(child, 'exit');
  t.equal(code, 1);
  t.match(stderr, /the embedded database belongs to one process/);
  t.notMatch(stderr, /\n\s+at /, 'no stack trace');
});

t.test('npm start against a PostgreSQL that refuses connections says why in one line and exits 1', async (t) => {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, DATABASE_URL: 'postgres://u:p@127.0.0.1:1/d', SESSION_SECRET: 'x'.repeat(32), PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = await once(child, 'exit');
  t.equal(code, 1);
  t.match(stderr, /cannot start: cannot reach PostgreSQL at 127\.0\.0\.1:1\/d/);
  t.notMatch(stderr, /\n\s+at /, 'no stack trace');
});
