// The service the way self-hosters run it: the Containerfile's image, built here on stand-in bases
// (no registry is reachable: test/support/containers.ts makes them from Debian's packages), and
// compose.yaml started as written: PostgreSQL, two service containers on it, nginx in front hashing
// on the key, and the dev-idp profile (a token from its published port signs in through nginx). An
// operator makes organizations and keys in a container (`node tools/org-create.ts`),
// scores and records through nginx until both containers have served, stops one (SIGTERM: the
// service's own stop, well within the grace period) and starts it again, and finds every recorded
// transaction still there and scoring working again. The image is checked as the docs promise: an
// unprivileged user, a read-only root file system, no compiler, cargo, dev dependency, build cache
// or secret in it, at most 120 MB over its Node base. The time from `compose up` to a first recorded
// score is printed; its goal (< 30 s) is bench:containers', not an assertion here. Everything the
// test starts is removed at its end; the images it builds stay (named localhost/fraud-test-*), so
// that a second run reuses them.

import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { needs } from '../support/components.ts';
import { buildAppImage, Composition, IMAGE_PREFIX, imageSizeMb, podman, ROOT } from '../support/containers.ts';
import { standIns } from '../support/stand-ins.ts';
import { freePort } from '../support/own-postgres.ts';

const SKIP = needs('podman');
// A fresh machine makes the four stand-in bases (.ci/run makes them beforehand, beside its install)
// and compiles the addon, the server and the dashboard in the image's build: minutes on two busy
// cores, beyond the suite's five per file.
t.setTimeout(1_800_000);
const APP = `${IMAGE_PREFIX}app:latest`;
const SIZE_GOAL_MB = 120;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks until `fn` answers without throwing, or fails with its last reason at the deadline. */
async function until<T>(what: string, fn: () => Promise<T>, seconds = 120): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s: ${(e as Error).message}`);
      await sleep(250);
    }
  }
}

t.test('compose.yaml: two service containers behind nginx on PostgreSQL, built from the Containerfile', { skip: SKIP, timeout: 3_600_000 }, async (t) => {
  const began = Date.now();
  const bases = await standIns((line) => t.comment(line));
  t.comment(`stand-in bases ready in ${((Date.now() - began) / 1000).toFixed(0)} s`);
  const building = Date.now();
  await buildAppImage(APP, bases);
  t.comment(`the service's image built in ${((Date.now() - building) / 1000).toFixed(0)} s`);

  await t.test('the image: small, unprivileged, no build tools, dev dependencies, caches or secrets', async (t) => {
    const added = (await imageSizeMb(APP)) - (await imageSizeMb(bases.node));
    t.comment(`the image adds ${added.toFixed(1)} MB to its Node base (goal ≤ ${SIZE_GOAL_MB})`);
    t.ok(added <= SIZE_GOAL_MB, `adds ${added.toFixed(1)} MB to its base, at most ${SIZE_GOAL_MB}`);
    // Podman shows the health check beside the configuration, not in it.
    const [{ Config: config, Healthcheck: healthcheck }] = JSON.parse(await podman(['image', 'inspect', APP])) as {
      Config: { User: string; Env: string[]; Cmd: string[] };
      Healthcheck?: { Test: string[] };
    }[];
    t.equal(config.User, '1000:1000', 'runs as an unprivileged user');
    t.ok(config.Env.includes('HOST=0.0.0.0') && config.Env.includes('PORT=8080'), 'listens on 8080 on every interface');
    t.match(healthcheck?.Test.join(' ') ?? '', /\/api\/health/, 'its health check asks /api/health');
    // The image runs the build as `npm start` does, with the same Node options.
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const options = start.split(/\s+/).filter((w) => w.startsWith('--'));
    t.same(config.Cmd, ['node', ...options, 'dist/main.js'], "its command is npm start's, without npm");
    const secrets = config.Env.filter((e) => /^(SESSION_SECRET|POSTGRES_PASSWORD|DATABASE_URL|AUTHPROVIDER_JWT_SECRET)=/.test(e));
    t.same(secrets, [], 'no secret in its environment');
    // What the image holds, listed from inside it: anything found is a defect.
    const found = await podman([
      'run',
      '--rm',
      '--read-only',
      '--entrypoint',
      'sh',
      APP,
      '-c',
      [
        'for p in cc gcc c++ ld cargo rustc rustup tsc; do command -v "$p"; done',
        'find / -xdev \\( -name cargo -o -name rustc -o -name "cc1*" -o -name "*.rlib" -o -name .npm -o -name .cargo -o -name target -o -name .env -o -name "*.pem" -o -name session-secret \\) -print 2>/dev/null',
        'for m in tap typescript vite @biomejs @napi-rs/cli autocannon playwright-core openapi-typescript; do test -e "/app/node_modules/$m" && echo "/app/node_modules/$m"; done',
        'true',
      ].join('; '),
    ]);
    t.same(found.split('\n').filter(Boolean), [], 'no compiler, cargo, rustc, build cache, dev dependency or secret file in it');
  });

  const project = `fraud-test-${randomBytes(3).toString('hex')}`;
  const sessionSecret = randomBytes(32).toString('hex');
  // The dev-idp profile as .env.example describes it, on a port of its own (known before `up`).
  const idpPort = await freePort();
  const idpUrl = `http://127.0.0.1:${idpPort}`;
  const composition = new Composition(
    project,
    { ...bases, app: APP },
    {
      SESSION_SECRET: sessionSecret,
      POSTGRES_PASSWORD: randomBytes(16).toString('hex'),
      WEB_CONCURRENCY: '1',
      AUTHPROVIDER_URL: idpUrl,
      AUTHPROVIDER_JWKS_URL: 'http://dev-idp:9999/auth/v1/.well-known/jwks.json',
      DEV_IDP_PORT: String(idpPort),
    },
    ['dev-idp'],
  );
  t.teardown(() => composition.down());

  const up = Date.now();
  await composition.compose(['up', '-d', '--no-build']);
  const base = await composition.base();

  const score = async (key: string, id: string, customer = 'cus-1') => {
    const res = await fetch(`${base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        transaction_id: id,
        amount: 42.5,
        customer_id: customer,
        merchant_id: 'mer-1',
        location: 'Lisbon',
        payment_type: 'card_not_present',
      }),
    });
    const body = (await res.json()) as { risk_score?: number; detail?: { reason?: string } };
    if (res.status !== 200) throw new Error(`scoring answered ${res.status}: ${body.detail?.reason ?? JSON.stringify(body).slice(0, 200)}`);
    return body;
  };
  const recorded = async (key: string) => {
    const res = await fetch(`${base}/api/v1/transactions?limit=100`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`listing answered ${res.status}`);
    return ((await res.json()) as { data: { transaction_id: string }[] }).data.map((d) => d.transaction_id).sort();
  };

  const first = await composition.organization('first shop');
  const firstScore = await until('the first score through nginx', () => score(first.api_key, 'first'));
  const upToScore = (Date.now() - up) / 1000;
  t.type(firstScore.risk_score, 'number', 'a key made in a container scores through nginx');
  t.comment(`compose up to the first recorded score: ${upToScore.toFixed(1)} s (the organization made in between; timed by bench:containers)`);

  // Signing in through the dev-idp profile: a token from its published port, a session from the
  // service behind nginx, which checked it with the key set it fetched by the composition's name.
  const token = await until('a token from the dev-idp profile', async () => {
    const res = await fetch(`${idpUrl}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ana@example.com' }),
    });
    if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status}`);
    return ((await res.json()) as { access_token: string }).access_token;
  });
  const session = await fetch(`${base}/api/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ access_token: token }),
  });
  t.equal(session.status, 200, 'a dev-idp token signs in through nginx');
  const cookie = session.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const me = await fetch(`${base}/api/organizations`, { headers: { cookie } });
  t.equal(me.status, 200, 'and the session reaches the member routes');

  // Keys until both containers have served one (nginx places each key by its hash).
  const keys = await composition.keysOnBoth(score);
  t.same(new Set(keys.map((k) => k.on)), new Set(['app1', 'app2']), `both containers served (${keys.length} keys)`);

  // Transactions recorded in both containers, each key's on its own container.
  const expected = new Map<string, string[]>([[first.api_key, ['first']]]);
  for (const [i, k] of keys.entries()) {
    const ids = [k.transactionId];
    for (let j = 0; j < 10; j++) {
      await score(k.key, `tx-${i}-${j}`, `cus-${j % 3}`);
      ids.push(`tx-${i}-${j}`);
    }
    expected.set(k.key, ids.sort());
  }
  for (const [key, ids] of expected) t.same(await recorded(key), ids, 'every transaction recorded');
  // Each container holds its keys' transactions in memory: each served its own.
  for (const service of ['app1', 'app2'] as const) {
    const own = keys.filter((k) => k.on === service).reduce((n, k) => n + expected.get(k.key)!.length, 0);
    const held = (await composition.health(service)).transactions_held;
    t.ok(held >= own, `${service} holds its keys' ${own} transactions (${held})`);
  }

  // One container stopped as the runtime stops it (SIGTERM, then a 15 s grace) and started again.
  const restarted = keys.find((k) => k.on === 'app1')!;
  const stopping = Date.now();
  await podman(['stop', '--time', '15', composition.container('app1')], { timeout: 60_000 });
  const stopSeconds = (Date.now() - stopping) / 1000;
  const exit = (await podman(['inspect', '--format', '{{.State.ExitCode}}', composition.container('app1')])).trim();
  t.equal(exit, '0', 'SIGTERM stops the service cleanly (exit 0, not killed at the grace period)');
  t.ok(stopSeconds < 14, `stopped in ${stopSeconds.toFixed(1)} s, before the grace period's end`);
  // Meanwhile the other container goes on serving its keys.
  const other = keys.find((k) => k.on === 'app2')!;
  t.type((await score(other.key, 'during-stop')).risk_score, 'number', 'the other container scores while one is stopped');
  expected.get(other.key)!.push('during-stop');
  await podman(['start', composition.container('app1')]);
  await until('the restarted container healthy', async () => {
    if ((await composition.health('app1')).status !== 'ok') throw new Error('not ok yet');
  });
  for (const [key, ids] of expected) t.same(await recorded(key), ids.sort(), 'nothing recorded is lost across the restart');
  await until('scoring after the restart', () => score(restarted.key, 'after-restart'));
  // nginx still reaches it: the container came back at its fixed address.
  t.equal((await composition.health('app1')).organizations_loaded, 1, 'the restarted container serves its key again');
  t.ok((await recorded(restarted.key)).includes('after-restart'), 'and records again');

  // The running containers as compose.yaml starts them.
  const inspect = JSON.parse(await podman(['inspect', composition.container('app1')])) as { HostConfig: { ReadonlyRootfs: boolean } }[];
  t.equal(inspect[0]!.HostConfig.ReadonlyRootfs, true, 'the service runs on a read-only root file system');
  t.equal((await composition.exec('app1', ['id', '-u'])).trim(), '1000', 'as user 1000');
  await t.rejects(composition.exec('app1', ['touch', '/app/written']), 'the root file system refuses writes');
  const logs = await podman(['logs', composition.container('app1')]);
  t.notOk(logs.includes(sessionSecret), 'the session secret appears in no log line');
});
