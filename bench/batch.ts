// `npm run bench:batch [-- --quick]`: a labelled dataset from upload to finished download through
// the real server as `npm start` runs it (`scripts/start.mjs`: the compiled `dist/main.js`;
// embedded database, its own process, loaded over loopback from this one): rows per second end to
// end and per stage (upload with validation, the job's own stages, download), the server's peak
// resident memory, and, in the same run, the addon's raw batch speed on the same rows (the four
// boosters' predictions and exact SHAP values, features precomputed) as the ceiling. `--quick`
// scores 100,000 rows three times in one server (the first run also starts its worker thread and
// warms its code); the full run scores 50,000, 100,000 and 200,000 rows, so that memory growth
// with the number of rows shows, then 100,000 twice more. The goal is judged on the median of the
// 100,000-row runs. Last line: JSON.

import { join } from 'node:path';
import { extractBatch } from '../src/domain/features/extract.ts';
import { History } from '../src/domain/history/history.ts';
import { loadModelFolder } from '../src/model/bundle.ts';
import { isProblem } from '../src/model/bundle-types.ts';
import { simulate, toCsv } from '../src/domain/simulate.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { memoryMb, resetPeakMemory, root, startServer, stopServer } from './server-process.ts';

benchmarkCommandLine({
  name: 'bench:batch',
  about: 'A labelled dataset from upload to finished download through the real server, against the addon alone.',
  quick: '100,000 rows three times in one server (the full run: 50,000, 100,000, 200,000, then 100,000 twice)',
});

const sizes = quick ? [100_000, 100_000, 100_000] : [50_000, 100_000, 200_000, 100_000, 100_000];

const datasets = new Map<number, { csv: string; rows: ReturnType<typeof simulate>; ceiling: number }>();
/** `n` labelled rows from the service simulator, in its CSV format, and the addon's ceiling on
 *  them (made once per size). */
function dataset(n: number): { csv: string; rows: ReturnType<typeof simulate>; ceiling: number } {
  let d = datasets.get(n);
  if (!d) {
    const all = simulate({ seed: 77, customers: 1200, merchants: 250, days: Math.ceil((n / 255_552) * 90 * (2000 / 1200)) + 3, rings: 2 });
    const rows = all.slice(0, n);
    datasets.set(n, (d = { csv: toCsv(rows), rows, ceiling: addonCeiling(rows) }));
  }
  return d;
}

/** The ceiling: the addon alone on the same rows' features (computed first, not timed). */
function addonCeiling(rows: ReturnType<typeof simulate>): number {
  const bundle = loadModelFolder(join(root, 'models/builtin'));
  if (isProblem(bundle)) throw new Error(bundle.message);
  const { features } = extractBatch(rows, new History(bundle.file.training.label_delay_ms));
  const t0 = performance.now();
  for (const c of bundle.channels) {
    const m = features[c.name];
    const w = c.features.length;
    for (let start = 0; start < rows.length; start += 2048) {
      const part = m.subarray(start * w, Math.min(rows.length, start + 2048) * w);
      c.engine.predictRawBatch(part);
      c.engine.shapBatch(part);
    }
  }
  return rows.length / ((performance.now() - t0) / 1000);
}

const json = async (res: Response) => (await res.json()) as Record<string, any>;
const server = await startServer({ MAX_UPLOAD_MB: '100', MAX_DATASET_ROWS: '200000', UPLOAD_RATE_PER_MINUTE: '1000' });
const runs: Record<string, unknown>[] = [];
for (const n of sizes) {
  const { csv, ceiling } = dataset(n);
  // The peak is measured from here: this run's upload, job and download, not the server's start.
  const rssBefore = memoryMb(server.child.pid!, 'VmRSS');
  const peakFromHere = resetPeakMemory(server.child.pid!);
  const t0 = performance.now();
  const up = await fetch(`${server.url}/api/datasets/upload?filename=bench.csv`, { method: 'POST', body: csv, headers: { 'content-type': 'text/csv' } });
  const d = await json(up);
  if (up.status !== 201) throw new Error(`upload: ${JSON.stringify(d).slice(0, 300)}`);
  const t1 = performance.now();
  let job = await json(
    await fetch(`${server.url}/api/datasets/score`, {
      method: 'POST',
      body: JSON.stringify({ dataset_id: d.id }),
      headers: { 'content-type': 'application/json' },
    }),
  );
  while (job.status !== 'succeeded' && job.status !== 'failed') {
    await new Promise((r) => setTimeout(r, 20));
    job = await json(await fetch(`${server.url}/api/jobs/${job.id}`));
  }
  if (job.status !== 'succeeded') throw new Error(`job failed: ${job.error}`);
  const t2 = performance.now();
  // Read as a client saving the file would: bytes, counting line ends, not decoded into a string.
  const download = await fetch(`${server.url}/api/jobs/${job.id}/download`);
  let lineEnds = 0;
  for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lineEnds++;
  }
  const t3 = performance.now();
  // The header, then one line a row (plain CSV: a drift warning is in the job, not in the file).
  const lines = lineEnds - 1;
  if (lines !== n) throw new Error(`download has ${lines} rows, expected ${n}`);
  const seconds = (t3 - t0) / 1000;
  const stageMs = job.summary.stage_ms as Record<string, number>;
  const run = {
    rows: n,
    end_to_end_rows_per_s: Math.round(n / seconds),
    seconds: Math.round(seconds * 100) / 100,
    stages_ms: {
      upload_and_validate: Math.round(t1 - t0),
      job: Math.round(t2 - t1),
      ...Object.fromEntries(Object.entries(stageMs).map(([k, v]) => [`job_${k}`, v])),
      download: Math.round(t3 - t2),
    },
    stage_rows_per_s: Object.fromEntries(
      Object.entries({ upload_and_validate: t1 - t0, job: t2 - t1, download: t3 - t2, ...stageMs }).map(([k, v]) => [
        k,
        Math.round(n / (Math.max(v, 1) / 1000)),
      ]),
    ),
    addon_ceiling_rows_per_s: Math.round(ceiling),
    ratio_to_ceiling: Math.round((n / seconds / ceiling) * 1000) / 1000,
    server_rss_before_mb: rssBefore,
    server_rss_mb: memoryMb(server.child.pid!, 'VmRSS'),
    server_peak_rss_mb: memoryMb(server.child.pid!, 'VmHWM'),
    peak_is_this_run: peakFromHere,
    auc_on_file: job.summary.metrics?.roc_auc ?? null,
  };
  runs.push(run);
  console.log(
    `${n.toLocaleString('en')} rows: ${run.end_to_end_rows_per_s.toLocaleString('en')} rows/s end to end (${run.seconds} s); addon ceiling ${run.addon_ceiling_rows_per_s.toLocaleString('en')} rows/s; server RSS ${run.server_rss_before_mb} MB before, peak ${run.server_peak_rss_mb} MB${peakFromHere ? ' during this run' : ' since start'} (${Math.round(((run.server_peak_rss_mb - run.server_rss_before_mb) * 1048576) / n)} bytes a row above before), ${run.server_rss_mb} MB after`,
  );
  console.log(`  stages ms: ${JSON.stringify(run.stages_ms)}`);
}
// Waited for, as bench/import.ts does: a server still stopping at this process's exit would leave
// its data directory behind.
await stopServer(server.child);
const at100k = runs.filter((r) => r.rows === 100_000).map((r) => r.end_to_end_rows_per_s as number);
const median = [...at100k].sort((a, b) => a - b)[Math.floor(at100k.length / 2)]!;
console.log(
  `100,000 rows end to end, median of ${at100k.length} runs: ${median.toLocaleString('en')} rows/s (runs: ${at100k.map((x) => x.toLocaleString('en')).join(', ')}); goal 50,000`,
);
console.log(JSON.stringify({ benchmark: 'batch', quick, runs, median_100k_rows_per_s: median, goal_50k_rows_per_s: median >= 50_000 }));
process.exit(0);
