// The README's and the guides' examples run, so the docs cannot drift from the service. Every
// shell block is read command by command:
// - `curl`: run against a server started for this test, with sign-in through `npm run dev:idp`, as a
//   reader would run it: `$API_KEY` starts as a key made beforehand, and `$ACCESS_TOKEN`,
//   `$CSRF_TOKEN`, `$ORG_ID`, `$API_KEY`, `$DATASET_ID`, `$JOB_ID` and `$WEBHOOK_ID` are then taken from the answers
//   before it, session cookies kept in the file the example names; the answer must not be an
//   error, and when a ```json block follows, the answer must have its shape (every key it shows,
//   with a value of the same JSON type), and the sandbox's numbers and the seeded simulator's row
//   counts exactly, and a new organization's scores (risk_score to the decimals shown, band,
//   decision, path) as the docs send them;
// - `npm`: the script exists; `npm run simulate` runs as written; any other command given options
//   must list each of them in its `--help`;
// - `NAME=value` before a command: NAME is one of the server's configuration variables.
// The README's configuration table must list exactly the variables the server reads, and its quick
// start runs step by step as written (both ways to a key).

import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { CONFIG_VARIABLES } from '../../src/config.ts';
import { spawnDevIdp, spawnServer, type ServerProcess } from '../support/processes.ts';
import { tempDir } from '../support/temp.ts';
import type { AddressInfo } from 'node:net';
import { liveFor } from '../support/accounts.ts';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const DOCS = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
/** Commands that set up a machine rather than use the service: named, never run. */
const SYSTEM = new Set(['apt-get', 'git', 'python3', 'pip', 'rustup']);
/** The container way (`cp .env.example .env`, `podman compose …`, `docker compose …`), run as
 *  written by test/containers/compose.test.ts; here each must name what the repository has: the
 *  file it copies, compose.yaml's services, the tool it runs in a container. */
function containerProblems(words: string[]): string[] {
  const [program, ...args] = words;
  if (program === 'cp') return existsSync(join(root, args[0] ?? '')) ? [] : [`${args[0]} is not in the repository`];
  if ((program === 'podman' || program === 'docker') && args[0] === 'compose') {
    const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
    const problems: string[] = [];
    if (args[1] === 'exec' && !new RegExp(`^  ${args[2]}:`, 'm').test(compose)) problems.push(`compose.yaml has no service ${args[2]}`);
    const tool = args.find((a) => a.startsWith('tools/'));
    if (tool && !existsSync(join(root, tool))) problems.push(`${tool} is not in the repository`);
    return problems;
  }
  return [`${program} is not a container command`];
}
const CONTAINER_WAY = new Set(['cp', 'podman', 'docker']);

/** `npm run` scripts cheap enough to run as written. */
const RUN_AS_WRITTEN = new Set(['simulate']);
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
/** Each script's `--help`, asked once (a process that loads the command's sources). */
const helps = new Map<string, Promise<string>>();
const help = (name: string, env: Record<string, string>): Promise<string> => {
  if (!helps.has(name))
    helps.set(
      name,
      run('npm', ['run', '-s', name, '--', '--help'], { cwd: root, env, timeout: 60_000 }).then((r) => r.stdout),
    );
  return helps.get(name)!;
};

interface Example {
  file: string;
  line: number;
  commands: string[];
  /** The ```json block right after the shell block, if any: the last command's answer's shape. */
  answer?: unknown;
}

/** Every shell block of a Markdown file, split into commands (continuation lines joined, comments
 *  and `&&` chains split off). */
function examples(file: string, section?: string): Example[] {
  let text = readFileSync(join(root, file), 'utf8');
  if (section) {
    const from = text.indexOf(`\n## ${section}\n`);
    text = text.slice(from, text.indexOf('\n## ', from + 1));
  }
  const lines = text.split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A block may be indented (inside a list item); its lines are read without that indent.
    const fence = /^(\s*)```(sh|bash|shell)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const indent = fence[1]!.length;
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trimStart().startsWith('```'); i++) body.push(lines[i]!.slice(indent));
    const commands = splitCommands(body.join('\n'));
    let answer: unknown;
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    if (lines[j]?.trim() === '```json') {
      const json: string[] = [];
      for (j++; j < lines.length && !lines[j]!.trimStart().startsWith('```'); j++) json.push(lines[j]!);
      answer = JSON.parse(json.join('\n'));
    }
    out.push({ file, line: start, commands, answer });
  }
  return out;
}

function splitCommands(text: string): string[] {
  const commands: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (let k = 0; k < text.length; k++) {
    const c = text[k]!;
    if (quote) {
      if (c === '\\' && quote === '"') {
        current += c + (text[++k] ?? '');
        continue;
      }
      if (c === quote) quote = undefined;
      current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      current += c;
    } else if (c === '\\' && text[k + 1] === '\n') {
      k++;
    } else if (c === '#' && (current === '' || /\s$/.test(current))) {
      while (k < text.length && text[k] !== '\n') k++;
      k--;
    } else if (c === '\n' || (c === '&' && text[k + 1] === '&')) {
      if (c === '&') k++;
      if (current.trim()) commands.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim()) commands.push(current.trim());
  return commands;
}

/** Where `answer` (what the docs show) and `actual` differ in shape: keys missing, or values of
 *  another JSON type. A documented null matches anything; a documented array's items are
 *  compared with the answer's items at the same places. */
function shapeProblems(doc: unknown, actual: unknown, path = '$'): string[] {
  if (doc === null) return [];
  if (Array.isArray(doc)) {
    if (!Array.isArray(actual)) return [`${path}: an array in the docs, ${JSON.stringify(actual)?.slice(0, 80)} in the answer`];
    return doc.flatMap((d, i) => (i < actual.length ? shapeProblems(d, actual[i], `${path}[${i}]`) : [`${path}[${i}]: missing`]));
  }
  if (typeof doc === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual))
      return [`${path}: an object in the docs, ${JSON.stringify(actual)?.slice(0, 80)} in the answer`];
    return Object.entries(doc).flatMap(([k, v]) =>
      k in actual ? shapeProblems(v, (actual as Record<string, unknown>)[k], `${path}.${k}`) : [`${path}.${k}: missing in the answer`],
    );
  }
  return typeof doc === typeof actual ? [] : [`${path}: a ${typeof doc} in the docs, ${JSON.stringify(actual)} in the answer`];
}

/** The model's numbers a doc shows (a score, its band, decision and path), as far as it shows them:
 *  a number to the decimals written, anything else exactly. Where they differ from the answer. */
const MODEL_FIELDS = new Set(['risk_score', 'risk_band', 'decision', 'path']);
/** The time the docs' model numbers are for: a Saturday, 15:40 UTC (the model reads the hour and
 *  the weekday). */
const DOCS_TIME = Date.UTC(2026, 10, 28, 15, 40);
function modelNumberProblems(doc: unknown, actual: unknown, path = '$'): string[] {
  if (Array.isArray(doc)) return Array.isArray(actual) ? doc.flatMap((d, i) => modelNumberProblems(d, actual[i], `${path}[${i}]`)) : [];
  if (doc === null || typeof doc !== 'object' || actual === null || typeof actual !== 'object') return [];
  return Object.entries(doc).flatMap(([k, v]) => {
    const got = (actual as Record<string, unknown>)[k];
    if (!MODEL_FIELDS.has(k)) return modelNumberProblems(v, got, `${path}.${k}`);
    if (typeof v === 'number' && typeof got === 'number') {
      const decimals = String(v).split('.')[1]?.length ?? 0;
      return Math.abs(got - v) <= 0.5 * 10 ** -decimals + 1e-12 ? [] : [`${path}.${k}: ${v} in the docs, ${got} in the answer`];
    }
    return v === got ? [] : [`${path}.${k}: ${JSON.stringify(v)} in the docs, ${JSON.stringify(got)} in the answer`];
  });
}

/**
 * The model reads a payment's hour and weekday, and a payment is timed by the server's clock: the
 * docs' model numbers are those of the time they name (DOCS_TIME). A test sends its API-key commands
 * again, in order, to this service, whose clock runs from that time, each key of the run standing
 * for a new organization here; these answers are held to the docs' numbers, the server's to their
 * shape.
 */
async function docsTimeReplica(t: Test): Promise<{ base: string; answer(command: string, cwd: string, env: Record<string, string>): Promise<unknown> }> {
  const started = Date.now();
  const { live } = await liveFor(t, { name: 'pglite' }, { SCORE_RATE_PER_MINUTE: 1000 }, undefined, () => DOCS_TIME + (Date.now() - started));
  await live.s.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(live.s.app.server.address() as AddressInfo).port}`;
  const keys = new Map<string, string>();
  return {
    base,
    async answer(command, cwd, env) {
      const key = env.API_KEY!;
      if (!keys.has(key)) keys.set(key, (await live.organization(`docs-${keys.size}`)).key);
      const { stdout } = await run('sh', ['-c', command], { cwd, env: { ...env, API_KEY: keys.get(key)! }, timeout: 30_000 });
      return JSON.parse(stdout);
    },
  };
}

t.test('the shape check itself', async (t) => {
  t.same(shapeProblems({ a: 1, b: [{ c: 'x' }], d: null }, { a: 2, b: [{ c: 'y', e: 1 }], d: { any: 1 }, f: 0 }), []);
  t.same(shapeProblems({ a: 1 }, { a: '1' }), ['$.a: a number in the docs, "1" in the answer']);
  t.same(shapeProblems({ b: [{ c: 'x' }, { c: 'z' }] }, { b: [{ c: 'y' }] }), ['$.b[1]: missing']);
  t.same(shapeProblems({ g: {} }, {}), ['$.g: missing in the answer']);
  t.same(
    modelNumberProblems({ data: [{ risk_score: 0.08, decision: 'approve', amount: 1 }] }, { data: [{ risk_score: 0.0849, decision: 'approve', amount: 2 }] }),
    [],
  );
  t.same(modelNumberProblems({ risk_score: 0.08, decision: 'approve' }, { risk_score: 0.0949, decision: 'review' }), [
    '$.risk_score: 0.08 in the docs, 0.0949 in the answer',
    '$.decision: "approve" in the docs, "review" in the answer',
  ]);
  t.same(splitCommands('npm ci && npm start  # two\ncurl -s x \\\n  -d \'{"a": "#1"}\''), ['npm ci', 'npm start', `curl -s x   -d '{"a": "#1"}'`]);
});

t.test("the README's configuration table is every variable the server reads", async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  const listed = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!);
  t.same([...listed].sort(), [...CONFIG_VARIABLES].sort());
});

t.test('every example in the README and the guides runs', async (t) => {
  const all = DOCS.flatMap((file) => examples(file));
  t.ok(
    all.some((e) => e.commands.some((c) => c.startsWith('curl'))),
    'the docs have curl examples',
  );

  // Sign-in goes through the local identity provider the guides tell a developer to run, so the
  // guides' own steps (a token, a session, an organization, a key) run as written.
  const work = tempDir('docs-examples-');
  const idp = await spawnDevIdp(work);
  let server: ServerProcess | undefined;
  t.teardown(async () => {
    await server?.stop();
    await idp.stop();
  });
  server = await spawnServer({ AUTHPROVIDER_URL: idp.url, SESSION_SECRET: '', SCORE_RATE_PER_MINUTE: '1000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  const pinned = await docsTimeReplica(t);
  // The README's examples come first and use a key made beforehand, as its quick start does.
  const org = await organizationThrough(idp.url, server.base, 'docs');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), API_KEY: org.secret, ORG_ID: org.id };

  for (const example of all) {
    for (const [n, command] of example.commands.entries()) {
      const where = `${example.file}:${example.line}: ${command.slice(0, 90)}`;
      const words = command.split(/\s+/);
      const assignments = words.filter((w, i) => /^[A-Z_]+=/.test(w) && words.slice(0, i).every((x) => /^[A-Z_]+=/.test(x)));
      for (const a of assignments) t.ok(CONFIG_VARIABLES.includes(a.split('=')[0]!), `${where}: ${a.split('=')[0]} is a configuration variable`);
      const [program, ...args] = words.slice(assignments.length);
      if (program === 'curl') {
        const text = command
          .replaceAll('http://127.0.0.1:8080', server.base)
          .replaceAll('localhost:8080', server.base)
          .replaceAll('http://127.0.0.1:9999', idp.url);
        const { stdout } = await run('sh', ['-c', text], { cwd: work, env, timeout: 30_000 });
        const output = / -o (\S+)/.exec(text)?.[1];
        if (output) {
          t.ok(existsSync(join(work, output)) && statSync(join(work, output)).size > 0, `${where}: writes ${output}`);
          continue;
        }
        let answer: any;
        try {
          answer = JSON.parse(stdout);
        } catch {
          t.fail(`${where}: answered ${stdout.slice(0, 200)}`);
          continue;
        }
        t.notOk(answer?.detail?.reason, `${where}: answered ${answer?.detail?.reason ?? 'no error'}`);
        const pinnedAnswer = text.includes('/api/v1/') ? await pinned.answer(text.replaceAll(server.base, pinned.base), work, env) : undefined;
        if (example.answer !== undefined && n === example.commands.length - 1) {
          t.same(shapeProblems(example.answer, answer), [], `${where}: the answer has the shape the docs show`);
          // Fixed states: the sandbox's answers and the seeded simulator's row counts are exact.
          if (text.includes('/api/risk/score')) t.has(answer, example.answer, `${where}: the sandbox's numbers exactly`);
          // A new organization's scores, in the order the docs send them and at the docs' time,
          // are a fixed state too.
          if (text.includes('/api/v1/risk/score') || text.includes('/api/v1/transactions')) {
            t.same(modelNumberProblems(example.answer, pinnedAnswer), [], `${where}: the model's numbers shown, at ${new Date(DOCS_TIME).toISOString()}`);
          }
          if (text.includes('/api/datasets/upload')) t.equal(answer.rows, (example.answer as { rows?: number }).rows, `${where}: the row count shown`);
        }
        // What the next examples name: a token, a session's CSRF token, an organization, a key.
        if (typeof answer?.access_token === 'string') env.ACCESS_TOKEN = answer.access_token;
        if (typeof answer?.csrf_token === 'string') env.CSRF_TOKEN = answer.csrf_token;
        if (typeof answer?.id === 'string' && answer.id.startsWith('org_')) env.ORG_ID = answer.id;
        if (typeof answer?.secret === 'string' && answer.secret.startsWith('sk_')) env.API_KEY = answer.secret;
        if (typeof answer?.id === 'string' && answer.id.startsWith('ds_')) env.DATASET_ID = answer.id;
        if (typeof answer?.id === 'string' && answer.id.startsWith('we_')) env.WEBHOOK_ID = answer.id;
        if (typeof answer?.id === 'string' && answer.id.startsWith('job_')) {
          env.JOB_ID = answer.id;
          t.equal(await finished(server.base, answer.id), 'succeeded', `${where}: the job succeeds`);
        }
      } else if (program === 'npm') {
        const [verb, script, ...rest] = args;
        if (verb === 'ci') continue;
        const name = verb === 'run' ? script! : verb!;
        t.ok(scripts[name], `${where}: package.json has the script ${name}`);
        const options = (verb === 'run' ? rest : [script, ...rest]).filter((a): a is string => a !== undefined);
        const given = options.slice(options.indexOf('--') + 1);
        if (!options.includes('--')) continue;
        if (RUN_AS_WRITTEN.has(name)) {
          // npm runs scripts in the package's folder: a file the example names goes to the work folder.
          const placed = given.map((a) => (a.endsWith('.csv') && !a.startsWith('/') ? join(work, basename(a)) : a));
          await run('npm', ['run', '-s', name, '--', ...placed], { cwd: root, env, timeout: 60_000 });
        } else {
          const stdout = await help(name, env);
          for (const flag of given.filter((a) => a.startsWith('--'))) t.ok(stdout.includes(flag.split('=')[0]!), `${where}: ${name} --help lists ${flag}`);
        }
      } else if (CONTAINER_WAY.has(program!)) {
        t.same(containerProblems([program!, ...args]), [], `${where}: names what the repository has`);
      } else {
        t.ok(SYSTEM.has(program!), `${where}: a command this test knows how to check`);
      }
    }
  }
});

t.test("the README's quick start runs as written, both ways to a key", async (t) => {
  const steps = examples('README.md', 'Quick start');
  const work = tempDir('quick-start-');
  // The first start takes a port the system gives; a restart takes the same one back.
  let port = 0;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), DATA_DIR: work };
  let server: ServerProcess | undefined;
  let idp: Awaited<ReturnType<typeof spawnDevIdp>> | undefined;
  let idpAddress = 'http://127.0.0.1:9999';
  let pinned: Awaited<ReturnType<typeof docsTimeReplica>> | undefined;
  t.teardown(async () => {
    await server?.stop();
    await idp?.stop();
  });
  const here = (command: string) => command.replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${port}`).replaceAll('http://127.0.0.1:9999', idpAddress);
  const ran: string[] = [];
  for (const step of steps) {
    for (const [n, command] of step.commands.entries()) {
      const where = `README.md quick start: ${command.slice(0, 90)}`;
      const words = here(command).split(/\s+/);
      const assignments = words.filter((w, i) => /^[A-Z_]+=/.test(w) && words.slice(0, i).every((x) => /^[A-Z_]+=/.test(x)));
      const rest = words.slice(assignments.length).join(' ');
      if (rest === 'npm ci' || rest === 'npm test') continue;
      if (rest === 'npm start') {
        // A restart, as the README says: the embedded database belongs to one process.
        await server?.stop();
        const set = Object.fromEntries(assignments.map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
        server = await spawnServer({ DATA_DIR: work, AUTHPROVIDER_URL: '', SESSION_SECRET: '', ...set }, { port });
        port = Number(new URL(server.base).port);
        ran.push('start');
      } else if (rest.startsWith('npm run org:create')) {
        // "Stop the server (Ctrl-C)" comes first in the README.
        await server?.stop();
        server = undefined;
        const { stdout } = await run('sh', ['-c', rest.replace('npm run ', 'npm run -s ')], { cwd: root, env, timeout: 60_000 });
        const made = JSON.parse(stdout) as { organization_id: string; api_key: string; owner?: unknown };
        t.match(made, { organization_id: /^org_/, api_key: /^sk_test_/ }, `${where}: prints the organization and its key`);
        // An organization made without an owner could never be managed from the dashboard.
        t.ok(made.owner, `${where}: the organization has an owner to manage it from the dashboard`);
        env.API_KEY = made.api_key;
        ran.push('org:create');
      } else if (rest === 'npm run dev:idp') {
        idp = await spawnDevIdp(work);
        idpAddress = idp.url;
        ran.push('dev:idp');
      } else if (rest.startsWith('curl')) {
        const { stdout } = await run('sh', ['-c', rest], { cwd: work, env, timeout: 30_000 });
        const answer = JSON.parse(stdout);
        const pinnedAnswer = rest.includes('/api/v1/')
          ? await (pinned ??= await docsTimeReplica(t)).answer(rest.replaceAll(`http://127.0.0.1:${port}`, pinned.base), work, env)
          : undefined;
        t.notOk(answer?.detail?.reason, `${where}: answered ${answer?.detail?.reason ?? 'no error'}`);
        if (step.answer !== undefined && n === step.commands.length - 1) {
          t.same(shapeProblems(step.answer, answer), [], `${where}: the answer has the shape shown`);
          // The sandbox is a fixed state: its documented numbers are its answer's exactly.
          if (rest.includes('/api/risk/score')) t.has(answer, step.answer, `${where}: exactly the numbers shown`);
          if (rest.includes('/api/v1/')) t.same(modelNumberProblems(step.answer, pinnedAnswer), [], `${where}: the model's numbers shown, at the docs' time`);
        }
        ran.push(rest.includes('/api/v1/') ? 'v1' : 'sandbox');
      } else if (CONTAINER_WAY.has(words[assignments.length]!)) {
        // The container way, which test/containers runs: here, what it names exists.
        t.same(containerProblems(words.slice(assignments.length)), [], `${where}: names what the repository has`);
        ran.push('containers');
      } else t.fail(`${where}: a step this test does not know how to run`);
    }
  }
  t.same(ran, ['start', 'containers', 'containers', 'sandbox', 'org:create', 'start', 'dev:idp', 'start', 'v1', 'v1'], 'every step ran, in order');
  const health = await (await fetch(`${server!.base}/api/health`)).json();
  t.equal(health.auth_configured, true, 'the last start has sign-in through the local identity provider');
});

/** An organization and its key, made through the server's own routes with a session opened by a
 *  token of the local identity provider. */
async function organizationThrough(idpUrl: string, base: string, name: string): Promise<{ id: string; secret: string }> {
  const json = { 'content-type': 'application/json' };
  const token = (await (
    await fetch(`${idpUrl}/auth/v1/token?grant_type=password`, { method: 'POST', headers: json, body: JSON.stringify({ email: `${name}@example.com` }) })
  ).json()) as { access_token: string };
  const session = await fetch(`${base}/api/auth/session`, { method: 'POST', headers: json, body: JSON.stringify({ access_token: token.access_token }) });
  const cookies = Object.fromEntries(session.headers.getSetCookie().map((c) => c.split(';')[0]!.split('=') as [string, string]));
  const member = { ...json, cookie: `service_session=${cookies.service_session}; service_csrf=${cookies.service_csrf}`, 'x-csrf-token': cookies.service_csrf! };
  const org = (await (await fetch(`${base}/api/organizations`, { method: 'POST', headers: member, body: JSON.stringify({ name, stage: 'test' }) })).json()) as {
    id: string;
  };
  const key = (await (
    await fetch(`${base}/api/organizations/${org.id}/api-keys`, { method: 'POST', headers: member, body: JSON.stringify({ name: 'docs' }) })
  ).json()) as { secret: string };
  return { id: org.id, secret: key.secret };
}

async function finished(base: string, id: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const job = (await (await fetch(`${base}/api/jobs/${id}`)).json()) as { status: string };
    if (job.status === 'succeeded' || job.status === 'failed') return job.status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return 'still running after 30 s';
}
