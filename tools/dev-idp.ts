// `npm run dev:idp [-- --port N] [--host H]`: a local stand-in for the hosted authentication project,
// for development and evaluation, in the way of Firebase's auth emulator or Supabase's local stack.
// It answers the few paths the service and its dashboard use, in the hosted project's shapes:
// - `GET  /auth/v1/.well-known/jwks.json`: its public key (ES256);
// - `GET  /auth/v1/authorize?redirect_to=…`: the dashboard's "Sign in" link lands here; an e-mail-only
//   form (no password: anyone at this machine may be anyone), which sends the browser back to
//   `redirect_to#access_token=…` as the hosted project does;
// - `POST /auth/v1/token?grant_type=password` `{"email": …}`: a token for scripts and curl;
// - `GET  /auth/v1/user`: who a token belongs to (the server's optional fallback).
// A server started with AUTHPROVIDER_URL pointing here verifies these tokens exactly as it verifies
// the hosted project's (issuer, signature from the key set, expiry); nothing in the server knows
// this is not the real one. So that it is never mistaken for one, it listens on loopback only
// (another --host is refused), signs only for requests addressed to a loopback name (a web page
// cannot reach it through DNS rebinding) and sends tokens back only to loopback addresses. Its key
// set, being public, is served to any name: the service's containers fetch it by the composition's
// name for it.
// `--container` is compose.yaml's `dev-idp` profile: inside a container, loopback is the
// container's own, so it listens on every interface of the container and relies on the runtime
// publishing its port on the host's loopback only; `--public-url` is then the address browsers
// use (the issuer its tokens name).
// The signing key is kept in DATA_DIR (dev-idp-key.json, mode 0600), so tokens stay valid across
// its restarts; the user id of an e-mail is derived from it, so it is the same every time.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, jwtVerify, createLocalJWKSet, type JWK } from 'jose';
import { commandLine, flag, text, wholeNumber, UsageError, type Option } from '../src/command-line.ts';

/** How long a token it signs is valid, seconds (the hosted project's default). */
const TOKEN_SECONDS = 3600;
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const isLoopback = (host: string) => LOOPBACK_NAMES.has(host) || /^127(\.\d{1,3}){3}$/.test(host);

const hostOption: Option<string> = {
  ...text('H', 'the loopback address to listen on', { default: '127.0.0.1' }),
  absent: '127.0.0.1',
  parse: (raw) => {
    if (!isLoopback(raw))
      throw new UsageError(
        `dev:idp listens on loopback only (127.0.0.1, ::1 or localhost), not ${JSON.stringify(raw)}: it signs in anyone who types an e-mail, so it must never be reachable from another machine`,
      );
    return raw === '[::1]' ? '::1' : raw;
  },
};

const publicUrlOption: Option<string | undefined> = {
  ...text('URL', 'with --container: the address browsers and scripts reach it at, an http(s) address on loopback (http://127.0.0.1:9999)'),
  parse: (raw) => {
    const url = URL.canParse(raw) ? new URL(raw) : undefined;
    if (!url || !/^https?:$/.test(url.protocol) || !isLoopback(url.hostname) || url.pathname.replace(/\/+$/, '') !== '' || url.search || url.hash)
      throw new UsageError(
        `--public-url must be an http(s) origin on loopback, such as http://127.0.0.1:9999, not ${JSON.stringify(raw)}: the published port must stay on this machine`,
      );
    return url.origin;
  },
};

const values = commandLine({
  name: 'dev:idp',
  about: 'A local identity provider for development: e-mail-only sign-in, loopback only. Never for production.',
  options: {
    port: wholeNumber('the port (0: any free one)', { max: 65535, default: 9999, value: 'N' }),
    host: hostOption,
    container: flag(
      "inside a container whose port is published on the host's loopback only (compose.yaml's dev-idp profile): listen on every interface of the container",
    ),
    'public-url': publicUrlOption,
  },
  notes: ['Start the server with AUTHPROVIDER_URL set to the address it prints, then sign in from the dashboard, or get a token with POST /auth/v1/token.'],
  check: (v) =>
    v.container === Boolean(v['public-url'])
      ? undefined
      : '--container and --public-url go together: in a container the address it listens on is not the one browsers use',
});

interface KeyFile {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** The signing key kept in DATA_DIR, made on first use. */
async function signingKey(dataDir: string): Promise<KeyFile> {
  const path = join(dataDir, 'dev-idp-key.json');
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as KeyFile;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`${path} is not a key this tool wrote (${(e as Error).message}): delete it to make a new one`);
  }
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = createHash('sha256').update(JSON.stringify(publicJwk)).digest('base64url').slice(0, 16);
  const made: KeyFile = { kid, privateJwk: await exportJWK(privateKey), publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' } };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path, JSON.stringify(made), { mode: 0o600 });
  return made;
}

const dataDir = process.env.DATA_DIR || './data';
const key = await signingKey(dataDir).catch((e: Error) => {
  process.stderr.write(`npm run dev:idp: ${e.message}\n`);
  process.exit(2);
});
const privateKey = await importJWK(key.privateJwk, 'ES256');
const keySet = createLocalJWKSet({ keys: [key.publicJwk] });
let issuer = '';

/** The same user id for the same e-mail every time (a UUID's shape, as the hosted project's). */
function userId(email: string): string {
  const h = createHash('sha256').update(`${key.kid}\0${email}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function normalEmail(v: unknown): string | undefined {
  const email = typeof v === 'string' ? v.trim().toLowerCase() : '';
  return /^[^\s@]{1,64}@[^\s@]{1,253}$/.test(email) ? email : undefined;
}

function userOf(email: string) {
  const name = email.split('@')[0]!;
  return {
    id: userId(email),
    aud: 'authenticated',
    role: 'authenticated',
    email,
    email_confirmed_at: new Date(0).toISOString(),
    user_metadata: { email, email_verified: true, full_name: name },
    app_metadata: { provider: 'email', providers: ['email'] },
  };
}

async function tokenFor(email: string): Promise<string> {
  const user = userOf(email);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email, role: 'authenticated', user_metadata: user.user_metadata, app_metadata: user.app_metadata })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
    .setIssuer(issuer)
    .setSubject(user.id)
    .setAudience('authenticated')
    .setIssuedAt(now)
    .setExpirationTime(now + TOKEN_SECONDS)
    .sign(privateKey);
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The hosted project's error shape. */
const refuse = (res: ServerResponse, status: number, error: string, description: string) =>
  send(res, status, { error, error_description: description, msg: description });

/** Where a token may be sent back: an http(s) address on this machine. */
function redirectTarget(raw: string | null): URL | undefined {
  try {
    const url = new URL(raw ?? '');
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopback(url.hostname) ? url : undefined;
  } catch {
    return undefined;
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function signInPage(redirectTo: string, problem?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in (local identity provider)</title>
<style>body{font:16px system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}
label{display:block;margin:1rem 0 .3rem;font-weight:600}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1.2rem;font:inherit}.note{color:#555;font-size:.9rem}.problem{color:#a40000}</style></head>
<body><main><h1>Sign in</h1>
<p class="note">A local identity provider for development (<code>npm run dev:idp</code>): type any e-mail to sign in as that person. There is no password.</p>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/auth/v1/authorize">
<input type="hidden" name="redirect_to" value="${escapeHtml(redirectTo)}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="email" required autofocus>
<button type="submit">Sign in</button></form></main></body></html>`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 16_384) throw new Error('body too large');
  }
  return body;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', issuer);
  const path = url.pathname.replace(/\/+$/, '');
  // What is public (the key set, who it is) answers any name; what signs needs a loopback one.
  if (req.method === 'GET' && path === '/auth/v1/.well-known/jwks.json')
    return send(res, 200, { keys: [key.publicJwk] }, { 'cache-control': 'public, max-age=600' });
  if (req.method === 'GET' && (path === '/auth/v1/health' || path === ''))
    return send(res, 200, { name: 'dev-idp', description: 'local identity provider for development', issuer });
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!isLoopback(host)) return refuse(res, 421, 'misdirected_request', 'This identity provider signs in only requests addressed to a loopback name.');
  if (path === '/auth/v1/authorize') {
    if (req.method === 'GET') {
      const target = redirectTarget(url.searchParams.get('redirect_to'));
      if (!target) return refuse(res, 400, 'invalid_request', 'redirect_to must be an http(s) address on this machine (a loopback host).');
      // The form's answer redirects to the dashboard: form-action covers redirects, so it names it.
      const csp = `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${target.origin}`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': csp });
      return void res.end(signInPage(target.href));
    }
    if (req.method === 'POST') {
      const form = new URLSearchParams(await readBody(req));
      const target = redirectTarget(form.get('redirect_to'));
      if (!target) return refuse(res, 400, 'invalid_request', 'redirect_to must be an http(s) address on this machine (a loopback host).');
      const email = normalEmail(form.get('email'));
      if (!email) {
        res.writeHead(422, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        return void res.end(signInPage(target.href, 'Type an e-mail address, such as you@example.com.'));
      }
      const fragment = new URLSearchParams({
        access_token: await tokenFor(email),
        token_type: 'bearer',
        expires_in: String(TOKEN_SECONDS),
        expires_at: String(Math.floor(Date.now() / 1000) + TOKEN_SECONDS),
        type: 'signup',
      });
      res.writeHead(303, { location: `${target.origin}${target.pathname}${target.search}#${fragment}`, 'cache-control': 'no-store' });
      return void res.end();
    }
  }
  if (req.method === 'POST' && path === '/auth/v1/token') {
    const grant = url.searchParams.get('grant_type');
    if (grant !== 'password')
      return refuse(
        res,
        400,
        'unsupported_grant_type',
        'Use POST /auth/v1/token?grant_type=password with {"email": "you@example.com"} (any password, or none).',
      );
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return refuse(res, 400, 'invalid_request', 'Send a JSON body: {"email": "you@example.com"}.');
    }
    const email = normalEmail((body as { email?: unknown } | null)?.email);
    if (!email) return refuse(res, 400, 'invalid_request', 'The body needs "email": an e-mail address.');
    return send(res, 200, {
      access_token: await tokenFor(email),
      token_type: 'bearer',
      expires_in: TOKEN_SECONDS,
      expires_at: Math.floor(Date.now() / 1000) + TOKEN_SECONDS,
      refresh_token: '',
      user: userOf(email),
    });
  }
  if (req.method === 'GET' && path === '/auth/v1/user') {
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    try {
      const { payload } = await jwtVerify(token ?? '', keySet, { issuer });
      return send(res, 200, userOf(String(payload.email)));
    } catch {
      return refuse(res, 401, 'invalid_token', 'The token is missing, expired, or not one this provider signed.');
    }
  }
  return refuse(
    res,
    404,
    'not_found',
    'This local identity provider answers /auth/v1/.well-known/jwks.json, /auth/v1/authorize, /auth/v1/token and /auth/v1/user.',
  );
}

const server = createServer((req, res) => {
  handle(req, res).catch((e: Error) => {
    if (!res.headersSent) refuse(res, 400, 'invalid_request', e.message);
    else res.destroy();
  });
});
server.on('error', (e: NodeJS.ErrnoException) => {
  process.stderr.write(
    `npm run dev:idp: cannot listen on ${listenHost}:${values.port}: ${e.code === 'EADDRINUSE' ? 'the port is in use (another dev:idp?); choose another with --port' : e.message}\n`,
  );
  process.exit(1);
});
const listenHost = values.container ? '0.0.0.0' : values.host;
server.listen(values.port, listenHost, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  const origin = values['public-url'] ?? `http://${values.host.includes(':') ? `[${values.host}]` : values.host}:${port}`;
  issuer = `${origin}/auth/v1`;
  process.stdout.write(
    [
      values.container
        ? `dev:idp listening on ${origin} (in a container, on port ${port} of every interface: publish it on loopback only; for development, never production)`
        : `dev:idp listening on ${origin} (loopback only; for development, never production)`,
      '',
      'Start the server with it (nothing else to configure on the embedded database):',
      `  AUTHPROVIDER_URL=${origin} npm start`,
      'Then open the dashboard, choose Sign in and type any e-mail; or, for scripts:',
      `  curl -s -X POST '${origin}/auth/v1/token?grant_type=password' -H 'content-type: application/json' -d '{"email":"you@example.com"}'`,
      '',
    ].join('\n'),
  );
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
