// Scoring jobs end to end through the real app and worker threads, on each storage back end:
// queue a labelled upload, watch progress come from the work (stages in order, never backwards),
// 409 until it finishes, then paged results with the metrics on the file, and a CSV download in
// which every formula-like value is escaped.

import t from 'tap';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { backends, start } from '../support/server.ts';

const rows = simulate({ seed: 5, customers: 200, merchants: 40, days: 20, rings: 1 });
const lines = toCsv(rows).trim().split('\n');
// Two rows whose customer ids a spreadsheet would run as formulas.
const cols = lines[0]!.split(',');
const ci = cols.indexOf('customer_id');
const poison = (line: string, value: string) =>
  line
    .split(',')
    .map((v, i) => (i === ci ? value : v))
    .join(',');
lines[1] = poison(lines[1]!, '=HYPERLINK("http://x";"y")'.replace(/"/g, '""').replace(/^/, '"').replace(/$/, '"'));
lines[2] = poison(lines[2]!, '@SUM(A1)');
const CSV = `${lines.join('\n')}\n`;

for (const backend of backends()) {
  t.test(`jobs on ${backend.name}`, async (t) => {
    const running = await start({ backend });
    t.teardown(() => running.close());
    const app = running.app;
    t.equal(running.service.jobs!.threads, 0, 'no worker thread before any upload');
    const up = await app.inject({ method: 'POST', url: '/api/datasets/upload', payload: CSV, headers: { 'content-type': 'text/csv' } });
    t.equal(up.statusCode, 201, up.body.slice(0, 300));
    const dataset = up.json();
    t.equal(running.service.jobs!.threads, 1, 'the upload was validated in a worker thread, which stays for the job that usually follows');

    const queued = await app.inject({ method: 'POST', url: '/api/datasets/score', payload: { dataset_id: dataset.id, mode: 'high_recall' } });
    t.equal(queued.statusCode, 202);
    const job = queued.json();
    t.match(job.id, /^job_/);
    t.ok(['queued', 'running'].includes(job.status));

    const early = await app.inject({ method: 'GET', url: `/api/jobs/${job.id}/result` });
    if (early.statusCode === 409) t.equal(early.json().detail.reason, 'job_not_finished', '409 until it finishes');

    const seen: { status: string; stage: string; progress: number }[] = [];
    let current = job;
    for (let i = 0; i < 600 && !['succeeded', 'failed'].includes(current.status); i++) {
      await new Promise((r) => setTimeout(r, 50));
      current = (await app.inject({ method: 'GET', url: `/api/jobs/${job.id}` })).json();
      seen.push({ status: current.status, stage: current.stage, progress: current.progress });
    }
    t.equal(current.status, 'succeeded', JSON.stringify(current.error ?? ''));
    t.equal(current.progress, 1);
    t.ok(current.elapsed_seconds >= 0 && current.elapsed_seconds < 120, `elapsed ${current.elapsed_seconds} s, in seconds`);
    const progress = seen.map((s) => s.progress);
    t.same(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress never goes backwards',
    );

    const page1 = (await app.inject({ method: 'GET', url: `/api/jobs/${job.id}/result?page=1&page_size=50` })).json();
    t.equal(page1.total_rows, rows.length);
    t.equal(page1.rows.length, 50);
    t.equal(page1.total_pages, Math.ceil(rows.length / 50));
    t.same(
      page1.rows.slice(0, 3).map((r: { row: number }) => r.row),
      [1, 2, 3],
    );
    t.ok(page1.metrics.roc_auc > 0.8, 'metrics on the labelled file');
    const last = (await app.inject({ method: 'GET', url: `/api/jobs/${job.id}/result?page=${page1.total_pages}&page_size=50` })).json();
    t.equal(last.rows.at(-1).row, rows.length);
    const tooBig = await app.inject({ method: 'GET', url: `/api/jobs/${job.id}/result?page_size=5000` });
    t.equal(tooBig.statusCode, 422);

    const download = await app.inject({ method: 'GET', url: `/api/jobs/${job.id}/download` });
    t.equal(download.statusCode, 200);
    t.match(download.headers['content-type'], /text\/csv/);
    // Plain CSV: the header first, then the rows; the job's drift warning is in its summary only.
    const csvLines = download.body.trim().split('\r\n');
    t.match(csvLines[0], /^row,transaction_id,amount,/, 'the header is the first line');
    t.equal(csvLines.length, rows.length + 1);
    t.match(csvLines[1], /^1,[^,]*,[^,]*,"'=HYPERLINK\(""http:\/\/x"";""y""\)"/, 'a leading = is escaped');
    t.match(csvLines[2], /^2,[^,]*,[^,]*,'@SUM\(A1\),/, 'a leading @ is escaped');
    t.notMatch(download.body, /,=|,\+|,@|,-[A-Za-z]/, 'no cell starts a formula');

    t.equal((await app.inject({ method: 'GET', url: '/api/jobs/job_nothing' })).statusCode, 404);
    const bad = await app.inject({ method: 'POST', url: '/api/datasets/score', payload: { dataset_id: 'ds_missing' } });
    t.equal(bad.statusCode, 404);
  });
}
