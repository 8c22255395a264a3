// `npm run bench:import [-- --quick]`: how fast a history import stores an uploaded file, through the
// real server as `npm start` runs it (compiled `dist/main.js`, its own process, loaded over
// loopback). The file is simulated (labelled, in time order, with a transaction id column) and has
// four columns of the organization's own beside ours: an e-mail domain and a device hash (string
// key fields), a basket's item count (number) and whether 3-D Secure passed (yes/no). Two variants
// import the same file into a new organization each round, each on a server (and database) of its
// own, alternating (each round starting with the next variant) so that a busy moment of the host
// touches both: `plain` maps our columns only (the baseline: what an import did before fields could
// be mapped), `fields` also maps the four columns onto declared fields, whose cells are then
// converted, checked (card numbers, IP addresses) and stored with each row. With `--against DIR`,
// another checkout (an earlier version, built) serves a third variant, `before`: the plain import
// on that version's server, in the same rotation, so that a change's before and after are measured
// on the same host at the same moments (this host's neighbours move a run's figures by a factor of
// two or more). Reported per variant: the job's rows per second (from its `started_at` to its
// `finished_at`), and its checking, storing and features passes apart (the stage changes, seen by
// polling every 20 ms). Then the `traffic` part: one import into an organization that is scoring
// meanwhile at a fixed rate (the built-in example, 255,552 rows; with --quick the 50,000-row
// file), its scores' p99 while the rows are stored and while their features are computed, against
// the same organization's p99 just before (the baseline). Embedded database; with DATABASE_URL set,
// on that PostgreSQL server too (a fresh database per server). Last line: JSON.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { simulate, toCsv } from '../src/domain/simulate.ts';
import { oneOf, text, UsageError } from '../src/command-line.ts';
import { freshDatabase } from '../test/support/server.ts';
import { SignIn } from '../test/support/processes.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { fixedRate, running, type Load } from './fixed-rate.ts';
import { scoreRequests } from './requests.ts';
import { startServer, stopServer } from './server-process.ts';

const options = benchmarkCommandLine({
  name: 'bench:import',
  about: 'A history import of an uploaded file through the real server: with mapped fields against without.',
  quick: '50,000 rows, three rounds of each variant (the full run: 250,000 rows, five rounds of each)',
  options: {
    variant: oneOf(['plain', 'fields'], 'run only this variant of this checkout (default: both)'),
    only: oneOf(['files', 'traffic'], 'run only the file rounds, or only the import under traffic (default: both)'),
    backend: oneOf(['embedded', 'postgres'], 'run on this back end only (default: the embedded database, and PostgreSQL with DATABASE_URL)'),
    against: text('DIR', 'another checkout, built (npm run build:server): its server runs the plain import too, as the variant `before`'),
  },
  notes: ['DATABASE_URL (a PostgreSQL server on which this role may create and drop databases): the same rounds on a fresh database there too.'],
});

const ROWS = quick ? 50_000 : 250_000;
const ROUNDS = quick ? 3 : 5;
if (options.against && !existsSync(join(options.against, 'dist/main.js')))
  throw new UsageError(`--against ${options.against}: no dist/main.js there (build it with npm run build:server)`);
type Variant = 'before' | 'plain' | 'fields';
const variants: Variant[] = [...(options.against ? (['before'] as const) : []), ...(options.variant ? [options.variant] : (['plain', 'fields'] as const))];

/** The file: simulated rows (the batch benchmark's population), with four columns of our own. */
function dataset(n: number): string {
  const rows = simulate({ seed: 91, customers: 1200, merchants: 250, days: Math.ceil((n / 255_552) * 90 * (2000 / 1200)) + 3, rings: 2 }).slice(0, n);
  const lines = toCsv(rows).trimEnd().split('\n');
  const domains = ['example.com', 'mail.example', 'post.example.org', 'inbox.example.net', 'webmail.example'];
  const out = [`${lines[0]},email_domain,device,basket_items,three_ds`];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const c = Number(r.customer_id.replace(/\D/g, '')) || i;
    out.push(`${lines[i + 1]},${domains[c % domains.length]},d${(c * 2654435761).toString(16).slice(-12)},${1 + (i % 7)},${i % 5 === 0 ? 'no' : 'yes'}`);
  }
  return `${out.join('\n')}\n`;
}

const FIELDS = [
  { name: 'email_domain', type: 'string', key: true },
  { name: 'device', type: 'string', key: true },
  { name: 'basket_items', type: 'number' },
  { name: 'three_ds', type: 'boolean' },
];

interface Round {
  variant: string;
  rows: number;
  job_s: number;
  rows_per_s: number;
  checking_s: number;
  storing_s: number;
  /** The imported rows' point-in-time features (the job's last stage). */
  features_s: number;
}

const json = async (res: Response) => (await res.json()) as Record<string, any>;

/** Waits until no server of `servers` runs a job (its /api/health `jobs_running`). */
async function idle(servers: { url: string }[]): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (const server of servers) {
    for (;;) {
      const health = await json(await fetch(`${server.url}/api/health`));
      if (Object.values(health.jobs_running as Record<string, number>).every((n) => n === 0)) break;
      if (Date.now() > deadline) throw new Error(`jobs still running after 10 minutes: ${JSON.stringify(health.jobs_running)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Polls a job every 20 ms until it ends; when each stage was first seen (ms), and `onStage` told of
 *  each as it begins. Throws when the job failed. */
async function followJob(
  base: string,
  member: Record<string, string>,
  id: string,
  onStage?: (stage: string) => void,
): Promise<{ job: Record<string, any>; stages: Record<string, number> }> {
  const stages: Record<string, number> = {};
  for (;;) {
    const job = await json(await fetch(`${base}/api/jobs/${id}`, { headers: member }));
    if (typeof job.stage === 'string' && stages[job.stage] === undefined) {
      stages[job.stage] = Date.now();
      onStage?.(job.stage);
    }
    if (job.status === 'failed') throw new Error(`import failed: ${job.error}`);
    if (job.status === 'succeeded') return { job, stages };
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rounds(backend: string, database: () => Promise<Record<string, string>>, csv: string): Promise<Round[]> {
  const signIn = await SignIn.start();
  const serverEnv = async () => ({
    ...signIn.env,
    ...(await database()),
    MAX_UPLOAD_MB: '200',
    MAX_DATASET_ROWS: String(ROWS),
    UPLOAD_RATE_PER_MINUTE: '1000',
    MAX_JOBS_PER_ORG_PER_DAY: '1000',
  });
  // A server (and database) per variant: each stores the same rows round after round, so that no
  // variant imports into a larger database than another.
  const servers = new Map<Variant, Awaited<ReturnType<typeof startServer>>>();
  const out: Round[] = [];
  try {
    for (const variant of variants) servers.set(variant, await startServer(await serverEnv(), variant === 'before' ? options.against : undefined));
    for (let k = 0; k < ROUNDS; k++) {
      // Each round starts with another variant: none is always the one after a quiet pause.
      for (const variant of [...variants.slice(k % variants.length), ...variants.slice(0, k % variants.length)]) {
        // An import queues ring analyses of its weeks (worker threads): each round starts once every
        // server has finished the last round's.
        await idle([...servers.values()]);
        const server = servers.get(variant)!;
        const org = await signIn.organization(server.url, `bench-import-${backend}-${variant}-${k}`);
        let mapping = '';
        if (variant === 'fields') {
          for (const f of FIELDS) {
            const res = await fetch(`${server.url}/api/organizations/${org.id}/fields`, { method: 'POST', headers: org.member, body: JSON.stringify(f) });
            if (res.status !== 201) throw new Error(`declaring ${f.name}: ${res.status} ${await res.text()}`);
          }
          mapping = `&mapping=${encodeURIComponent(JSON.stringify({ fields: Object.fromEntries(FIELDS.map((f) => [f.name, f.name])) }))}`;
        }
        const up = await fetch(`${server.url}/api/datasets/upload?filename=bench.csv&organization_id=${org.id}${mapping}`, {
          method: 'POST',
          body: csv,
          headers: { ...org.member, 'content-type': 'text/csv' },
        });
        const d = await json(up);
        if (up.status !== 201) throw new Error(`upload: ${JSON.stringify(d).slice(0, 300)}`);
        const queued = await fetch(`${server.url}/api/organizations/${org.id}/history-imports`, {
          method: 'POST',
          headers: org.member,
          body: JSON.stringify({ dataset_id: d.id }),
        });
        const job = await json(queued);
        if (queued.status !== 202) throw new Error(`queueing: ${JSON.stringify(job).slice(0, 300)}`);
        const { job: done, stages } = await followJob(server.url, org.member, job.id as string);
        if (done.summary.imported !== ROWS) throw new Error(`imported ${done.summary.imported} of ${ROWS}`);
        const started = Date.parse(done.started_at);
        const finished = Date.parse(done.finished_at);
        const seconds = (finished - started) / 1000;
        const storingAt = stages.importing ?? finished;
        const featuresAt = stages.features ?? finished;
        const round = {
          variant,
          rows: ROWS,
          job_s: round2(seconds),
          rows_per_s: Math.round(ROWS / seconds),
          checking_s: round2((storingAt - started) / 1000),
          storing_s: round2((featuresAt - storingAt) / 1000),
          features_s: round2((finished - featuresAt) / 1000),
        };
        out.push(round);
        console.log(
          `${backend}, ${variant}: ${round.rows_per_s.toLocaleString('en')} rows/s (${round.job_s} s: checking ${round.checking_s} s, storing ${round.storing_s} s, features ${round.features_s} s)`,
        );
      }
    }
  } finally {
    // Waited for: a server still stopping when this process exits would write into its data
    // directory after it was removed, and leave it behind.
    await Promise.all([...servers.values()].map((server) => stopServer(server.child)));
    await signIn.close();
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Recorded scores a second while an import runs into the same organization. */
const TRAFFIC_RATE = 50;
const BASELINE_S = quick ? 8 : 20;

interface UnderTraffic {
  rows: number;
  source: 'example' | 'file';
  storing_s: number;
  features_s: number;
  /** The organization's own scores before the import (the baseline), while its rows were stored,
   *  and while their features were computed. */
  before: Load;
  storing: Load;
  features: Load;
  features_p99_ratio: number;
}

/** One import into an organization scoring at TRAFFIC_RATE: the example (or, with --quick, the file). */
async function underTraffic(backend: string, database: () => Promise<Record<string, string>>, csv: string): Promise<UnderTraffic> {
  const signIn = await SignIn.start();
  const server = await startServer({
    ...signIn.env,
    ...(await database()),
    MAX_UPLOAD_MB: '200',
    MAX_DATASET_ROWS: String(ROWS),
    SCORE_RATE_PER_MINUTE: '100000000',
  });
  try {
    const org = await signIn.organization(server.url, `bench-import-traffic-${backend}`);
    const requests = scoreRequests('traffic');
    const load = (seconds: number, until?: Promise<unknown>) =>
      fixedRate({ base: server.url, key: org.secret, makeBody: requests.newTransaction, rate: TRAFFIC_RATE, connections: 4, seconds, until });
    await load(3);
    const before = await load(BASELINE_S);
    if (before.served_rps === 0) throw new Error(`no score answered 2xx before the import (${before.errors} errors): ${server.stderr().slice(-500)}`);
    let body: string;
    if (quick) {
      const up = await fetch(`${server.url}/api/datasets/upload?filename=bench.csv&organization_id=${org.id}`, {
        method: 'POST',
        body: csv,
        headers: { ...org.member, 'content-type': 'text/csv' },
      });
      if (up.status !== 201) throw new Error(`upload: ${(await up.text()).slice(0, 300)}`);
      body = JSON.stringify({ dataset_id: (await json(up)).id });
    } else body = JSON.stringify({ example: true });
    const queued = await fetch(`${server.url}/api/organizations/${org.id}/history-imports`, { method: 'POST', headers: org.member, body });
    const job = await json(queued);
    if (queued.status !== 202) throw new Error(`queueing: ${JSON.stringify(job).slice(0, 300)}`);
    // A load per stage, each ended when the next stage begins.
    let storingEnds!: () => void;
    let featuresEnds!: () => void;
    const storingEnd = new Promise<void>((r) => (storingEnds = r));
    const featuresEnd = new Promise<void>((r) => (featuresEnds = r));
    let storing: Promise<Load> | undefined;
    let features: Promise<Load> | undefined;
    const followed = await followJob(server.url, org.member, job.id as string, (stage) => {
      if (stage === 'importing') storing = load(3600, storingEnd);
      if (stage === 'features') {
        storingEnds();
        features = load(3600, featuresEnd);
      }
    });
    storingEnds();
    featuresEnds();
    if (!storing || !features) throw new Error(`stages seen: ${Object.keys(followed.stages).join(', ')}`);
    const finished = Date.parse(followed.job.finished_at);
    const out: UnderTraffic = {
      rows: followed.job.summary.imported as number,
      source: quick ? 'file' : 'example',
      storing_s: round2((followed.stages.features! - followed.stages.importing!) / 1000),
      features_s: round2((finished - followed.stages.features!) / 1000),
      before,
      storing: await storing,
      features: await features,
      features_p99_ratio: 0,
    };
    out.features_p99_ratio = round2(out.features.p99_ms / Math.max(out.before.p99_ms, 1));
    console.log(
      `${backend}, under traffic (${TRAFFIC_RATE} scores/s of the same organization), ${out.rows.toLocaleString('en')} rows (${out.source}): storing ${out.storing_s} s, features ${out.features_s} s; p99 ${out.before.p99_ms} ms before, ${out.storing.p99_ms} ms while storing, ${out.features.p99_ms} ms while computing features (${out.features_p99_ratio}×); errors ${out.before.errors}/${out.storing.errors}/${out.features.errors}`,
    );
    return out;
  } finally {
    for (const r of running) r.stop();
    await stopServer(server.child);
    await signIn.close();
  }
}

const csv = dataset(ROWS);
const results: Record<string, Record<string, unknown>> = {};
const backends = options.backend ? [options.backend] : ['embedded', ...(process.env.DATABASE_URL ? ['postgres'] : [])];
if (options.backend === 'postgres' && !process.env.DATABASE_URL) throw new UsageError('--backend postgres needs DATABASE_URL');
for (const backend of backends) {
  // Each server its own database: a fresh one on PostgreSQL, its own data folder's when embedded.
  const drops: (() => Promise<void>)[] = [];
  const database = async (): Promise<Record<string, string>> => {
    if (backend === 'embedded') return {};
    const fresh = await freshDatabase(process.env.DATABASE_URL!);
    drops.push(fresh.drop);
    return { DATABASE_URL: fresh.url };
  };
  try {
    if (options.only === 'traffic') {
      results[backend] = { traffic: await underTraffic(backend, database, csv) };
      continue;
    }
    const all = await rounds(backend, database, csv);
    const byVariant: Record<string, unknown> = {};
    for (const variant of variants) {
      const mine = all.filter((r) => r.variant === variant);
      byVariant[variant] = {
        median_rows_per_s: median(mine.map((r) => r.rows_per_s)),
        median_checking_s: median(mine.map((r) => r.checking_s)),
        median_storing_s: median(mine.map((r) => r.storing_s)),
        median_features_s: median(mine.map((r) => r.features_s)),
        rounds: mine,
      };
      console.log(
        `${backend}, ${variant}: median ${median(mine.map((r) => r.rows_per_s)).toLocaleString('en')} rows/s of ${ROWS.toLocaleString('en')} (rounds: ${mine.map((r) => r.rows_per_s.toLocaleString('en')).join(', ')})`,
      );
    }
    if (options.only !== 'files') byVariant.traffic = await underTraffic(backend, database, csv);
    results[backend] = byVariant;
  } finally {
    for (const drop of drops) await drop();
  }
}
console.log(JSON.stringify({ benchmark: 'import', quick, rows: ROWS, rounds: ROUNDS, results }));
process.exit(0);
