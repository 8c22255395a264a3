// Real server processes for the tests about several processes: `src/main.ts`, as `npm start`
// runs it, in child processes on one PostgreSQL, with sign-in through a stand-in identity provider
// on loopback. A member signs in over HTTP and creates an organization and an API key, which every
// process then accepts (they share the database).

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { IdentityProvider, makeKey, signWith, type SigningKey } from './idp.ts';
import { dataDir as newDataDir } from './data-dir.ts';
import { freshDatabase } from './server.ts';
import { TEST_DATABASE_URL } from './components.ts';

export interface ServerProcess {
  base: string;
  child: ChildProcess;
  /** What the process wrote to standard error so far. */
  stderr(): string;
  /** The last 256 KB it wrote to standard output (its request log), when started with `stdout: 'pipe'`. */
  stdout(): string;
  /** Sends a signal and resolves with the exit code (or the signal) once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** The loopback address a server's output says it listens on ("ready on http://host:port"), once it
 *  has said so: with PORT=0 the port is the system's choice, known only from that line. */
export function listeningOn(output: string): string | undefined {
  const port = /ready on http:\/\/[^:]+:(\d+)/.exec(output)?.[1];
  return port === undefined ? undefined : `http://127.0.0.1:${port}`;
}

/** Starts a server process and waits until it is ready (`ready on` / `ready:` on standard error).
 *  A random port can be one the system just gave an outgoing connection: without a port of the
 *  caller's, a start refused with EADDRINUSE is tried again on another. */
export async function spawnServer(env: Record<string, string>, o: { port?: number; stdout?: 'pipe' | 'ignore' } = {}): Promise<ServerProcess> {
  return spawnOn(o.port ?? 0, env, o.stdout);
}

/** A server on `port`, or with 0 on one the system gives it (read from its "ready on" line): no
 *  port is picked free beforehand, which another process could take meanwhile. */
async function spawnOn(port: number, env: Record<string, string>, stdout: 'pipe' | 'ignore' = 'ignore'): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: newDataDir('server-'),
      LOG_LEVEL: 'warn',
      SCORE_RATE_PER_MINUTE: '1000000',
      ...env,
    },
    stdio: ['ignore', stdout, 'pipe'],
  });
  let exit: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve((exit = code ?? signal ?? 'unknown'))));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-256 * 1024)));
  while (!/ready on|ready: /.test(err)) {
    if (exit !== undefined) throw new Error(`the server exited (${exit}): ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base: listeningOn(err) ?? `http://127.0.0.1:${port}`,
    child,
    stderr: () => err,
    stdout: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (exit !== undefined) return exit;
      child.kill(signal);
      return exited;
    },
  };
}

/** `npm run dev:idp` as a child process on a free loopback port; `url` is what it prints. */
export async function spawnDevIdp(
  dataDir: string,
  args: string[] = [],
): Promise<{ url: string; banner: string; child: ChildProcess; stop(): Promise<unknown> }> {
  const child = spawn(process.execPath, ['tools/dev-idp.ts', '--port', '0', ...args], {
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = once(child, 'exit');
  for (let waited = 0; !/listening on (\S+)/.test(out); waited += 50) {
    if (child.exitCode !== null || waited > 20_000) throw new Error(`dev:idp did not start: ${err}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: /listening on (\S+)/.exec(out)![1]!,
    banner: out.split('\n')[0]!,
    child,
    stop: () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        return exited;
      }
      return Promise.resolve();
    },
  };
}

/** A signed-in member's headers and an organization with an API key, made through `base`. */
export interface KeyedOrganization {
  id: string;
  secret: string;
  member: Record<string, string>;
}

export class SignIn {
  readonly idp: IdentityProvider;
  private readonly key: SigningKey;

  private constructor(idp: IdentityProvider, key: SigningKey) {
    this.idp = idp;
    this.key = key;
  }

  static async start(): Promise<SignIn> {
    const idp = await new IdentityProvider().start();
    const key = await makeKey('ES256', 'k1');
    idp.published = [key];
    return new SignIn(idp, key);
  }

  /** The environment a server needs to accept this provider's tokens. */
  get env(): Record<string, string> {
    return { AUTHPROVIDER_URL: this.idp.url, SESSION_SECRET: 's'.repeat(48) };
  }

  /** An access token of this provider with `claims`, as a browser brings it back to `/login`. */
  token(claims: Record<string, string>): Promise<string> {
    return signWith(this.key, this.idp.issuer, claims);
  }

  async organization(base: string, name: string): Promise<KeyedOrganization> {
    const session = await fetch(`${base}/api/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: await signWith(this.key, this.idp.issuer, { sub: `owner-of-${name}` }) }),
    });
    const cookies = Object.fromEntries(session.headers.getSetCookie().map((c) => c.split(';')[0]!.split('=') as [string, string]));
    const member = {
      cookie: `service_session=${cookies.service_session}; service_csrf=${cookies.service_csrf}`,
      'x-csrf-token': cookies.service_csrf!,
      'content-type': 'application/json',
    };
    const org = (await (
      await fetch(`${base}/api/organizations`, { method: 'POST', headers: member, body: JSON.stringify({ name, stage: 'test' }) })
    ).json()) as { id: string };
    const key = (await (
      await fetch(`${base}/api/organizations/${org.id}/api-keys`, { method: 'POST', headers: member, body: JSON.stringify({ name: 'server' }) })
    ).json()) as { secret: string };
    return { id: org.id, secret: key.secret, member };
  }

  close(): Promise<void> {
    return this.idp.close();
  }
}

/** Two server processes on one database, started one after the other (the first applies the
 *  migrations), each added to `servers` as it starts (for the caller's teardown), and an
 *  organization with an API key made through the first. */
export async function serverPair(
  env: Record<string, string>,
  servers: ServerProcess[],
  signIn: SignIn,
  name: string,
): Promise<{ a: ServerProcess; b: ServerProcess; org: KeyedOrganization }> {
  const a = await spawnServer(env);
  servers.push(a);
  const b = await spawnServer(env);
  servers.push(b);
  return { a, b, org: await signIn.organization(a.base, name) };
}

/** Two server processes on a fresh database of the test server, an organization made through the
 *  first, and a member's request to either about that organization; stopped and dropped with the
 *  test. */
export async function twoProcesses(
  t: { teardown(fn: () => unknown): void },
  name: string,
): Promise<{
  a: ServerProcess;
  b: ServerProcess;
  org: KeyedOrganization;
  asMember(s: ServerProcess, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
}> {
  const db = await freshDatabase(TEST_DATABASE_URL!);
  const signIn = await SignIn.start();
  const servers: ServerProcess[] = [];
  t.teardown(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await signIn.close();
    await db.drop();
  });
  const { a, b, org } = await serverPair({ ...signIn.env, DATABASE_URL: db.url }, servers, signIn, name);
  const asMember = async (s: ServerProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.base}/api/organizations/${org.id}${path}`, {
      method,
      headers: org.member,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  return { a, b, org, asMember };
}

/** POST with an API key; the parsed body, status and whether it was a replay. */
export async function withKey(
  base: string,
  secret: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: any; text: string; replayed: boolean }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, text, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

export async function getWithKey(base: string, secret: string, path: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, json: await res.json() };
}

export { once };
