// `npm run bench:challengers [-- --quick]` (needs DATABASE_URL: a PostgreSQL server on which the
// benchmark may create and drop databases): what shadow scoring costs the recorded route. Two
// server processes, each on a database of its own, each with an organization scoring every request
// as a new recorded transaction: one organization has no challenger (the baseline), the other one
// (and then three) custom models as challengers, each scoring every request in shadow and recorded
// with it, and then instead one challenger with boosters of its own (its trees run beside the
// active model's). Rounds alternate between the two servers; the ratio is of the medians (goal: one
// challenger keeps at least 85 % of the throughput). Prints a table, then one JSON object.

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { dropDatabase } from '../test/support/server.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { startServer } from './server-process.ts';
import { pairedRounds } from './paired-load.ts';
import { SignIn } from '../test/support/processes.ts';
import { boosterTexts, loadModelFolder } from '../src/model/bundle.ts';
import { isProblem } from '../src/model/bundle-types.ts';
import { boostersDigest, mergeSettings } from '../src/model/custom.ts';
import { appendTrees } from '../src/training/partition.ts';

benchmarkCommandLine({
  name: 'bench:challengers',
  about: 'What one and three challengers scoring in shadow cost the recorded route (PostgreSQL: DATABASE_URL).',
  quick: '2 rounds of 4 s for each count',
});
const ROUNDS = quick ? 2 : 4;
const SECONDS = quick ? 4 : 10;
const CONNECTIONS = 16;
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) {
  process.stderr.write('bench:challengers runs on PostgreSQL: set DATABASE_URL to a server where this role may CREATE DATABASE.\n');
  process.exit(2);
}
const MODEL_DIR = 'models/builtin';
const model = loadModelFolder(MODEL_DIR);
if (isProblem(model)) throw new Error(model.message);

const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
const names: string[] = [];
const database = async () => {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  names.push(name);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
};
const signIn = await SignIn.start();
const servers: Awaited<ReturnType<typeof startServer>>[] = [];
const cleanUp = async () => {
  for (const s of servers) s.child.kill('SIGTERM');
  await Promise.all(servers.map((s) => new Promise((r) => (s.child.exitCode !== null ? r(null) : s.child.once('exit', r)))));
  await signIn.close();
  for (const name of names) await dropDatabase(admin, name);
  await admin.end();
};

try {
  const env = { SCORE_RATE_PER_MINUTE: '100000000', ...signIn.env };
  const [plainDb, shadowDb] = [await database(), await database()];
  const [plain, shadow] = await Promise.all([startServer({ ...env, DATABASE_URL: plainDb }), startServer({ ...env, DATABASE_URL: shadowDb })]);
  servers.push(plain, shadow);
  const plainOrg = await signIn.organization(plain.url, 'bench');
  const shadowOrg = await signIn.organization(shadow.url, 'bench');
  // Challengers as `npm run model:create` makes them: the built-in boosters with other thresholds.
  const sql = postgres(shadowDb, { max: 1, onnotice: () => {} });
  const challengers: string[] = [];
  for (const [i, review] of [0.2, 0.3, 0.4].entries()) {
    const id = `cm_bench_${i}`;
    const settings = mergeSettings(model.file, { thresholds: { balanced: { review, block: 0.9 } } });
    await sql`INSERT INTO custom_models (id, organization_id, name, base_model_id, settings) VALUES (${id}, ${shadowOrg.id}, ${`challenger ${i}`}, ${model.file.id}, ${sql.json(settings)})`;
    challengers.push(id);
  }
  // And one with boosters of its own, as `npm run train -- --organization` stores them: the
  // built-in trees followed by the trees it added (at most 300 at the recipe's learning rate);
  // here the built-in trees again, scaled to next to nothing, so that it costs what the most added trees
  // would (separate engines, twice the trees per channel) whatever they learned.
  const texts = boosterTexts(MODEL_DIR, model).map((t) => appendTrees(t, t, 1e-12));
  const own = { ...mergeSettings(model.file, {}), boosters: { sha256: boostersDigest(texts), trees: model.file.training.iterations } };
  await sql`INSERT INTO custom_models (id, organization_id, name, base_model_id, settings) VALUES ('cm_bench_own', ${shadowOrg.id}, 'own boosters', ${model.file.id}, ${sql.json(own)})`;
  for (const [k, c] of model.channels.entries())
    await sql`INSERT INTO custom_model_boosters (model_id, channel, model_text) VALUES ('cm_bench_own', ${c.name}, ${texts[k]!})`;
  await sql.end();
  const challenge = async (id: string, on = true) => {
    const { 'content-type': _, ...headers } = shadowOrg.member; // no body: no content type
    const res = await fetch(`${shadow.url}/api/models/${id}/challenger`, { method: on ? 'POST' : 'DELETE', headers });
    if (res.status !== 200) throw new Error(`challenger ${id}: ${res.status} ${await res.text()}`);
  };
  const results: Record<string, Awaited<ReturnType<typeof pairedRounds>>> = {};
  for (const [count, add] of [
    [1, challengers.slice(0, 1)],
    [3, challengers.slice(1)],
    ['own', ['cm_bench_own']],
  ] as const) {
    if (count === 'own') for (const id of challengers) await challenge(id, false);
    for (const id of add) await challenge(id);
    await new Promise((r) => setTimeout(r, 1_100)); // keys are trusted for a second
    process.stderr.write(`${count} challenger(s):\n`);
    results[count] = await pairedRounds({
      baseline: { base: plain.url, key: plainOrg.secret },
      changed: { base: shadow.url, key: shadowOrg.secret },
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
      label: `${count} challenger(s)`,
    });
  }
  const check = postgres(shadowDb, { max: 1, onnotice: () => {} });
  const [recorded] = await check<{ n: number; shadowed: number }[]>`SELECT count(*)::int AS n, count(challengers)::int AS shadowed FROM transactions`;
  await check.end();
  await cleanUp();

  console.log('');
  console.log(
    `| Recorded route on PostgreSQL (${CONNECTIONS} connections, ${ROUNDS} × ${SECONDS} s alternating) | baseline req/s (median) | with challengers | ratio |`,
  );
  console.log('|---|---|---|---|');
  for (const count of [1, 3, 'own'])
    console.log(
      `| ${count === 'own' ? 'one challenger with boosters of its own' : `${count} challenger(s)`} in shadow | ${Math.round(results[count]!.baseline)} | ${Math.round(results[count]!.changed)} | ${(results[count]!.ratio * 100).toFixed(1)} % |`,
    );
  console.log(`transactions recorded with their challengers' scores: ${recorded!.shadowed} of ${recorded!.n}`);
  console.log(
    JSON.stringify({
      benchmark: 'challengers',
      quick,
      one: results[1],
      three: results[3],
      own_boosters: results.own,
      ratio_one_challenger: Math.round(results[1]!.ratio * 1000) / 1000,
      ratio_three_challengers: Math.round(results[3]!.ratio * 1000) / 1000,
      ratio_own_boosters: Math.round(results.own!.ratio * 1000) / 1000,
      goals: { one_challenger_within_15_percent: results[1]!.ratio >= 0.85, own_boosters_within_15_percent: results.own!.ratio >= 0.85 },
    }),
  );
  process.exit(0);
} catch (e) {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  await cleanUp();
  process.exit(1);
}
