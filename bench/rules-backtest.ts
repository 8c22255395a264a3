// bench:rules, backtest part: a backtest of one rule over an organization's logged decisions,
// 1,000,000 of them (200,000 with --quick), run by the real job handler (jobs/backtest-job.ts) on a
// job queued, claimed and finished in the real job table. The baseline, in the same run, is a plain
// read of the same pages (`decisions.page`) with nothing done with them, so the ratio says what
// evaluating and tallying cost on top of reading; reads and backtests alternate. The logged
// decisions are real ones: requests scored by the real Scorer with the 20 rules of
// bench/rule-set.ts and stored as the decision log stores them, then copied in SQL with new ids and
// times; the organization has the 100,000-value block list, read as it was at each transaction's
// time. Memory (the V8 heap after a full collection, resident and peak resident size) is sampled
// when a quarter of the rows has been read and at the end. Embedded database by default;
// `DATABASE_URL` runs it on that PostgreSQL server, in a schema of its own dropped at the end.

import { recordedRow } from '../src/app/score-and-record.ts';
import { BUILT_IN_LANGUAGE, checkExpression } from '../src/domain/rules/expression.ts';
import { backtestHandler, type BacktestParams } from '../src/jobs/backtest-job.ts';
import { ProgressWriter } from '../src/jobs/runner.ts';
import type { Db } from '../src/storage/db.ts';
import { claimNext, createJob, finishJob } from '../src/storage/job-queue.ts';
import type { NewTransaction } from '../src/storage/live-rows.ts';
import { organizationData } from '../src/storage/organization-data.ts';
import { collectGarbage } from '../src/addon/collect.ts';
import { benchDatabase, withoutSecondaryIndexes } from './database.ts';
import { benchPolicy, type ExampleScoring } from './rules-scorer.ts';
import { BLOCK_LIST, benchRules } from './rule-set.ts';
import { memoryMb, resetPeakMemory } from './server-process.ts';

const DAY = 86_400_000;
const ORG = 'org_bench';
const TEMPLATES = 'org_templates';

/** The rule backtested: the block list, or a new customer's large payment. */
export const BACKTEST_RULE = `in_list("${BLOCK_LIST}", customer_id) || (customer.is_new && amount > 250.0)`;
/** The same with a feature read, which makes every page carry the features too (full runs). */
export const BACKTEST_FEATURE_RULE = `in_list("${BLOCK_LIST}", customer_id) || features["customer_count_1h"] >= 5.0`;

export interface BacktestRun {
  expression: string;
  /** The slowest of the runs. */
  seconds: number;
  /** The same pages read alone, the slowest of the reads. */
  read_seconds: number;
  /** Median over the runs of each run's time against the read before it. */
  ratio: number;
  rows_per_second: number;
  matched: number;
  run_seconds: number[];
  read_runs_seconds: number[];
}

export interface BacktestFigures {
  database: string;
  decisions: number;
  seed_seconds: number;
  runs: BacktestRun[];
  memory: {
    /** When a quarter of the rows had been read, and at the end. */
    quarter_rows: number;
    heap_mb_at_quarter: number;
    heap_mb_at_end: number;
    rss_mb_at_quarter: number;
    rss_mb_at_end: number;
    peak_rss_mb: number;
    rss_mb_before: number;
  };
}

// A full collection before each memory sample, so the heap figure is what is alive.
const gc = collectGarbage;

/** Logged decisions as the decision log writes them: the example's requests scored with 20 rules. */
function templates(example: ExampleScoring): NewTransaction[] {
  const context = { ...example.base, rules: benchPolicy(benchRules(20), example.listValues) };
  return example.inputs.map((input, k) => {
    const s = example.scorer.scoreToRecord({ ...input, transaction_id: `tpl-${k}` }, context);
    return recordedRow(s, JSON.stringify(s.result));
  });
}

async function seedLoggedDecisions(
  db: Db,
  example: ExampleScoring,
  rows: number,
  now: number,
  log: (line: string) => void,
): Promise<{ seconds: number; listId: string }> {
  const started = performance.now();
  await db.query(`INSERT INTO users (id, email) VALUES ('u', 'u@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ($1, 'bench', 'test', 'u'), ($2, 'templates', 'test', 'u')`, [ORG, TEMPLATES]);
  const made = templates(example);
  await organizationData(db, TEMPLATES).transactions.insert(made);
  await db.query(`CREATE TABLE bench_templates AS SELECT (row_number() OVER (ORDER BY seq) - 1)::int AS k, * FROM transactions WHERE organization_id = $1`, [
    TEMPLATES,
  ]);
  await db.query('CREATE UNIQUE INDEX ON bench_templates (k)');
  // Copies of the templates: new ids and times over the last 90 days, outcomes on one in fifty,
  // loaded without the secondary indexes (bench/database.ts).
  await withoutSecondaryIndexes(
    (text) => db.query(text),
    '64MB',
    async () => {
      for (let from = 0; from < rows; from += 100_000) {
        const to = Math.min(rows, from + 100_000);
        await db.query(
          `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, risk_score, risk_band, decision, mode,
                                   response, label, label_known_ms, features, model_id, model_decision, rule_action, rule_ids, rule_errors, inputs)
         SELECT $1, 'tx-' || g.i, $2 - 90 * ${DAY}::float8 + g.i * (90 * ${DAY}::float8 / $3), t.amount, t.customer_id, t.merchant_id, t.location, t.payment_type, 'scored',
                t.risk_score, t.risk_band, t.decision, t.mode, t.response,
                CASE WHEN g.i % 50 = 0 THEN (CASE WHEN g.i % 500 = 0 THEN 1 ELSE 0 END) END,
                CASE WHEN g.i % 50 = 0 THEN $2 - 90 * ${DAY}::float8 + g.i * (90 * ${DAY}::float8 / $3) + 3 * ${DAY}::float8 END,
                t.features, t.model_id, t.model_decision, t.rule_action, t.rule_ids, t.rule_errors, t.inputs
         FROM generate_series($4::bigint, $5::bigint - 1) AS g(i) JOIN bench_templates t ON t.k = g.i % $6`,
          [ORG, now, rows, from, to, made.length],
        );
        log(`  ${to.toLocaleString('en')} logged decisions stored (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      }
      await db.query('DROP TABLE bench_templates');
    },
  );
  log(`  indexes built (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  // The block list, added through the storage layer as the API adds it, in one call (the API
  // takes 10,000 values a request).
  const data = organizationData(db, ORG);
  const listId = 'list_bench_blocked';
  await data.lists.create({ id: listId, name: BLOCK_LIST, kind: 'customer_id', description: null, at: now - 100 * DAY, by: 'u' });
  const added = await data.lists.addItems(listId, example.listValues, { reason: null, expiresAt: null, at: now - 100 * DAY, by: 'u', maxItems: 1_000_000 });
  if ('over' in added) throw new Error('the block list is over the limit');
  log(`  the block list's ${example.listValues.length.toLocaleString('en')} values added (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  await db.query('ANALYZE transactions');
  await db.query('ANALYZE list_items');
  return { seconds: (performance.now() - started) / 1000, listId };
}

/** Reads every page the backtest reads, and nothing else. */
async function readPages(db: Db, to: number, withFeatures: boolean): Promise<number> {
  const data = organizationData(db, ORG);
  let rows = 0;
  let after: [number, number] | undefined;
  for (;;) {
    const page = await data.decisions.page({ from: 0, to, after, withFeatures });
    if (page.length === 0) return rows;
    rows += page.length;
    const last = page[page.length - 1]!;
    after = [last.time_ms, last.seq];
  }
}

interface MemorySample {
  heapMb: number;
  rssMb: number;
}

/** The runner's progress writer, sampling memory once when a quarter has been read. */
class SampledProgress extends ProgressWriter {
  quarter: MemorySample | undefined;

  override write(): Promise<boolean> {
    if (!this.quarter && this.fraction >= 0.25) this.quarter = sample();
    return super.write();
  }
}

function sample(): MemorySample {
  gc();
  const m = process.memoryUsage();
  return { heapMb: Math.round((m.heapUsed / 2 ** 20) * 10) / 10, rssMb: Math.round((m.rss / 2 ** 20) * 10) / 10 };
}

/** One backtest job through the handler, queued and claimed as the runner claims it. */
async function runJob(
  db: Db,
  params: BacktestParams,
  labelDelay: number,
  featureNames: readonly (readonly string[])[],
): Promise<{ seconds: number; matched: number; scanned: number; quarter: MemorySample; end: MemorySample; peakMb: number }> {
  const worker = `bench:${process.pid}`;
  await createJob(db, { kind: 'backtest', params, dataset_id: null, mode: null, owner_user_id: 'u', organization_id: ORG });
  const job = await claimNext(db, worker, 100);
  if (!job) throw new Error('the backtest job was not claimed');
  const handler = backtestHandler({ db, labelDelay, featureNames: async () => featureNames });
  const progress = new SampledProgress(db, job.id, worker, handler.stage);
  resetPeakMemory(process.pid);
  const started = performance.now();
  const result = (await handler.run(job, { progress, stopped: () => false })) as { scanned: number; matched: number };
  const seconds = (performance.now() - started) / 1000;
  const end = sample();
  const peakMb = memoryMb(process.pid, 'VmHWM');
  await finishJob(db, job.id, worker, result);
  return { seconds, matched: result.matched, scanned: result.scanned, quarter: progress.quarter!, end, peakMb };
}

export async function measureBacktest(o: {
  quick: boolean;
  log: (line: string) => void;
  example: ExampleScoring;
  featureNames: readonly (readonly string[])[];
  labelDelay: number;
}): Promise<BacktestFigures> {
  const rows = o.quick ? 200_000 : 1_000_000;
  const bench = await benchDatabase('rules');
  const { db } = bench;
  try {
    o.log(`storing ${rows.toLocaleString('en')} logged decisions on ${db.kind}…`);
    const now = Date.now();
    const { seconds: seedSeconds, listId } = await seedLoggedDecisions(db, o.example, rows, now, o.log);
    o.log(`stored in ${seedSeconds.toFixed(1)} s`);
    const to = now + 1;
    const version = (expression: string) => {
      const checked = checkExpression(expression, BUILT_IN_LANGUAGE, new Set([BLOCK_LIST])).checked!;
      return { rule_id: null, version: null, expression, action: 'block' as const, lists: { [BLOCK_LIST]: listId }, fields: [...checked.fields] };
    };
    const runs: BacktestRun[] = [];
    let memory: BacktestFigures['memory'] | undefined;
    const expressions = o.quick ? [BACKTEST_RULE] : [BACKTEST_RULE, BACKTEST_FEATURE_RULE];
    for (const expression of expressions) {
      const target = version(expression);
      const params: BacktestParams = { organization_id: ORG, target, compare: null, from: 0, to };
      const withFeatures = target.fields.includes('features');
      const reads: number[] = [];
      const jobs: Awaited<ReturnType<typeof runJob>>[] = [];
      const repeats = o.quick ? 1 : 2;
      for (let i = 0; i < repeats; i++) {
        let t = performance.now();
        const read = await readPages(db, to, withFeatures);
        reads.push((performance.now() - t) / 1000);
        if (read !== rows) throw new Error(`read ${read} rows, stored ${rows}`);
        const rssBefore = memoryMb(process.pid);
        t = performance.now();
        const job = await runJob(db, params, o.labelDelay, o.featureNames);
        if (job.scanned !== rows) throw new Error(`the backtest scanned ${job.scanned} rows, stored ${rows}`);
        jobs.push(job);
        o.log(
          `${expression}: page reads ${reads[i]!.toFixed(2)} s, backtest ${job.seconds.toFixed(2)} s (${job.matched.toLocaleString('en')} matched); heap ${job.quarter.heapMb} → ${job.end.heapMb} MB, RSS ${job.quarter.rssMb} → ${job.end.rssMb} MB (peak ${job.peakMb})`,
        );
        if (!memory && expression === BACKTEST_RULE)
          memory = {
            quarter_rows: rows / 4,
            heap_mb_at_quarter: job.quarter.heapMb,
            heap_mb_at_end: job.end.heapMb,
            rss_mb_at_quarter: job.quarter.rssMb,
            rss_mb_at_end: job.end.rssMb,
            peak_rss_mb: job.peakMb,
            rss_mb_before: rssBefore,
          };
      }
      const r2 = (x: number) => Math.round(x * 100) / 100;
      const ratios = jobs.map((j, i) => j.seconds / reads[i]!).sort((a, b) => a - b);
      const seconds = Math.max(...jobs.map((j) => j.seconds));
      runs.push({
        expression,
        seconds: r2(seconds),
        read_seconds: r2(Math.max(...reads)),
        ratio: r2(ratios.length % 2 ? ratios[ratios.length >> 1]! : (ratios[ratios.length / 2 - 1]! + ratios[ratios.length / 2]!) / 2),
        rows_per_second: Math.round(rows / seconds),
        matched: jobs[0]!.matched,
        run_seconds: jobs.map((j) => r2(j.seconds)),
        read_runs_seconds: reads.map(r2),
      });
    }
    return { database: db.kind, decisions: rows, seed_seconds: Math.round(seedSeconds * 10) / 10, runs, memory: memory! };
  } finally {
    await bench.close();
  }
}
