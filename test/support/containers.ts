// Podman for the container test and the containers benchmark: the service's image built from the
// working tree's Containerfile on the stand-in bases (stand-ins.ts), and a composition of
// compose.yaml started under a project name of its own, with its own env file, and removed whole.
// Every image made here is named localhost/fraud-test-*: kept between runs, so a second is quicker.

import { execFile } from 'node:child_process';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { StandIns } from './stand-ins.ts';
import { tempDir } from './temp.ts';

const run = promisify(execFile);
export const ROOT = new URL('../..', import.meta.url).pathname;

/** Every image this file makes starts with this; `podman rmi` them to free the disk. */
export const IMAGE_PREFIX = 'localhost/fraud-test-';

/** Runs a command; a failure says the command and the end of what it wrote, not a stack. */
export async function sh(program: string, args: string[], o: { timeout?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<string> {
  try {
    const { stdout } = await run(program, args, { maxBuffer: 64 * 1024 * 1024, timeout: o.timeout ?? 600_000, env: o.env ?? process.env, cwd: o.cwd });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message: string };
    const tail = `${err.stdout ?? ''}${err.stderr ?? ''}`.trim().split('\n').slice(-25).join('\n');
    throw new Error(`${program} ${args.join(' ').slice(0, 300)} failed: ${tail || err.message}`);
  }
}

export const podman = (args: string[], o: { timeout?: number; env?: NodeJS.ProcessEnv } = {}) => sh('podman', args, o);

/** Megabytes an image takes (its every layer). */
export async function imageSizeMb(name: string): Promise<number> {
  return Number(await podman(['image', 'inspect', '--format', '{{.Size}}', name])) / 1e6;
}

/** The certificate authorities this machine trusts (a proxy inspecting TLS may be among them),
 *  handed to the build as its `ca` secret, if there is a bundle. */
const CA_BUNDLE = [process.env.SSL_CERT_FILE, process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'].find((f) => f && existsSync(f));

/** The service's image, built from the working tree's Containerfile on the stand-ins. The npm and
 *  cargo caches are the builder's cache mounts, kept between runs on this machine. */
export async function buildAppImage(name: string, bases: StandIns): Promise<void> {
  // At a lower priority: the compile would otherwise take the cores from the test files beside it.
  await sh(
    'nice',
    [
      '-n',
      '10',
      'podman',
      'build',
      // The Docker image format: the OCI one has no place for the health check.
      '--format',
      'docker',
      ...(CA_BUNDLE ? ['--secret', `id=ca,src=${CA_BUNDLE}`] : []),
      '--network',
      'host',
      '--build-arg',
      `NODE_IMAGE=${bases.node}`,
      '--build-arg',
      `RUST_IMAGE=${bases.rust}`,
      '-f',
      join(ROOT, 'Containerfile'),
      '-t',
      name,
      ROOT,
    ],
    { timeout: 1_800_000 },
  );
}

/** A composition of compose.yaml under a project name of its own, with its own env file. */
export class Composition {
  readonly project: string;
  readonly envFile: string;
  private readonly env: NodeJS.ProcessEnv;

  /** compose.yaml's profiles started beside its default services (`--profile`). */
  private readonly profiles: string[];

  constructor(project: string, images: StandIns & { app: string }, settings: Record<string, string>, profiles: string[] = []) {
    this.project = project;
    this.profiles = profiles;
    const dir = tempDir(`${project}-`);
    this.envFile = join(dir, 'compose.env');
    // The env file as an operator's .env (the example's settings, the test's own secrets).
    writeFileSync(
      this.envFile,
      `${Object.entries(settings)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
      { mode: 0o600 },
    );
    // A copy of the repository's compose file and nginx configuration only: podman-compose reads a
    // project's `.env` beside its file, and the working tree's own, if any, must not apply here.
    cpSync(join(ROOT, 'compose.yaml'), join(dir, 'compose.yaml'));
    cpSync(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true });
    this.env = {
      ...process.env,
      ...settings,
      ENV_FILE: this.envFile,
      APP_IMAGE: images.app,
      NODE_IMAGE: images.node,
      RUST_IMAGE: images.rust,
      POSTGRES_IMAGE: images.postgres,
      NGINX_IMAGE: images.nginx,
      // The system picks the published port.
      PUBLISH: '127.0.0.1:',
      // A network of its own, unlikely to be taken (two compositions at once must not share one).
      NETWORK_PREFIX: `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 256)}`,
    };
    this.file = join(dir, 'compose.yaml');
  }

  private readonly file: string;

  compose(args: string[], timeout = 300_000): Promise<string> {
    const profiles = this.profiles.flatMap((p) => ['--profile', p]);
    return sh('podman-compose', ['--project-name', this.project, '-f', this.file, ...profiles, ...args], { env: this.env, timeout });
  }

  /** The container of a service (`<project>_<service>_1`, podman-compose's naming). */
  container(service: string): string {
    return `${this.project}_${service}_1`;
  }

  /** The address nginx is published on. */
  async base(): Promise<string> {
    const out = (await podman(['port', this.container('nginx'), '80'])).trim().split('\n')[0]!;
    return `http://${out.replace('0.0.0.0', '127.0.0.1')}`;
  }

  /** Runs a command in a service's container, as an operator would (`compose exec`). */
  exec(service: string, command: string[]): Promise<string> {
    return podman(['exec', this.container(service), ...command], { timeout: 120_000 });
  }

  /** A service's /api/health, asked inside its container (the service ports are not published). */
  async health(service: string): Promise<{ organizations_loaded: number; transactions_held: number; status: string }> {
    const out = await this.exec(service, [
      'node',
      '-e',
      "fetch('http://127.0.0.1:8080/api/health').then((r) => r.text()).then((t) => process.stdout.write(t))",
    ]);
    return JSON.parse(out);
  }

  /** Makes an organization and its first key as the docs tell operators to: the command line in a
   *  service container (which has the storage settings). Tried again while the database starts. */
  async organization(name: string): Promise<{ organization_id: string; api_key: string }> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        return JSON.parse(await this.exec('app1', ['node', 'tools/org-create.ts', '--name', name]));
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  /** Organizations and keys until nginx has placed keys on both service containers (each key's
   *  first score, `score`, loads its organization on the container its hash chose, which that
   *  container's health then counts): the keys, each with its container and the transaction it
   *  recorded. */
  async keysOnBoth(
    score: (key: string, transactionId: string) => Promise<unknown>,
    most = 16,
  ): Promise<{ key: string; on: 'app1' | 'app2'; transactionId: string }[]> {
    const served = async () => [(await this.health('app1')).organizations_loaded, (await this.health('app2')).organizations_loaded] as const;
    const keys: { key: string; on: 'app1' | 'app2'; transactionId: string }[] = [];
    let before = await served();
    for (let n = 1; n <= most && new Set(keys.map((k) => k.on)).size < 2; n++) {
      const { api_key } = await this.organization(`shop ${n}`);
      await score(api_key, `first-${n}`);
      const after = await served();
      const on = after[0] > before[0] ? 'app1' : after[1] > before[1] ? 'app2' : undefined;
      if (!on) throw new Error(`shop ${n}'s first score loaded it on neither container (organizations loaded: ${before} then ${after})`);
      keys.push({ key: api_key, on, transactionId: `first-${n}` });
      before = after;
    }
    if (new Set(keys.map((k) => k.on)).size < 2) throw new Error(`${most} keys all landed on ${keys[0]?.on}: nginx did not spread them`);
    return keys;
  }

  /** Stops and removes every container, network and volume of the project. */
  async down(): Promise<void> {
    await this.compose(['down', '--volumes', '--timeout', '20']).catch(() => undefined);
    // What a failed `up` may have left: anything labelled with the project.
    const label = `io.podman.compose.project=${this.project}`;
    const ids = (await podman(['ps', '-aq', '--filter', `label=${label}`]).catch(() => '')).split('\n').filter(Boolean);
    if (ids.length) await podman(['rm', '-f', '-v', ...ids]).catch(() => undefined);
    const volumes = (await podman(['volume', 'ls', '-q', '--filter', `label=${label}`]).catch(() => '')).split('\n').filter(Boolean);
    if (volumes.length) await podman(['volume', 'rm', '-f', ...volumes]).catch(() => undefined);
    const networks = (await podman(['network', 'ls', '-q', '--filter', `label=${label}`]).catch(() => '')).split('\n').filter(Boolean);
    if (networks.length) await podman(['network', 'rm', '-f', ...networks]).catch(() => undefined);
  }
}
