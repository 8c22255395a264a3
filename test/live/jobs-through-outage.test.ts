// Jobs through an outage of PostgreSQL, on the fault drill's two processes (test/support/
// fault-drill.ts): a history import whose database crashes part way is handed back to the queue and
// finished once the database is back, every row stored once and the outage not counted as an
// attempt; a dataset's scoring job that meets a stopped database finishes its work and has its end
// written when the database returns. JOB_STALE_SECONDS is far longer than the test, so neither is
// rescued by the stale-job recovery that follows a process's death: the runner itself waits.

import t from 'tap';
import postgres from 'postgres';
import { FaultDrill, HANG_MS, sleep } from '../support/fault-drill.ts';
import { needs } from '../support/components.ts';
import { tempDir } from '../support/temp.ts';
import { simulate, toCsv } from '../../src/domain/simulate.ts';

type Job = { id: string; status: string; stage: string; progress: number; error?: string; summary: Record<string, any> | null };

t.test('jobs wait for the database and resume', { skip: needs('own-postgres') }, async (t) => {
  // One data folder for both processes (uploads live on disk), as several processes share one.
  const drill = await FaultDrill.start({ DATA_DIR: tempDir('jobs-outage-'), JOB_STALE_SECONDS: '600' });
  t.teardown(async () => {
    if (!t.passing()) for (const line of drill.exits()) t.comment(line);
    await drill.stop();
  });
  const [a] = drill.servers;
  const headers = drill.org.member;

  /** The job as GET /api/jobs/{id} answers it, once `until` holds (answers while the database is
   *  away are 503s, and are waited through). */
  const waitFor = async (id: string, until: (j: Job) => boolean, ms = 90_000): Promise<Job> => {
    const end = performance.now() + ms;
    let last = '';
    while (performance.now() < end) {
      const res = await fetch(`${a!.base}/api/jobs/${id}`, { headers, signal: AbortSignal.timeout(HANG_MS) });
      last = await res.text();
      if (res.status === 200 && until(JSON.parse(last))) return JSON.parse(last);
      await sleep(50);
    }
    throw new Error(`job ${id}: still ${last}`);
  };
  const attempts = async (id: string): Promise<number> => {
    const sql = postgres(drill.pg.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ attempts: number }[]>`SELECT attempts FROM jobs WHERE id = ${id}`;
      return row!.attempts;
    } finally {
      await sql.end();
    }
  };

  // An upload with a timestamp column: imported as history, and scored.
  const csv = toCsv(simulate({ seed: 5, customers: 800, merchants: 200, days: 30, rings: 2 }));
  const rows = csv.trim().split('\n').length - 1;
  const uploaded = await fetch(`${a!.base}/api/datasets/upload`, { method: 'POST', body: csv, headers: { ...headers, 'content-type': 'text/csv' } });
  t.equal(uploaded.status, 201, 'uploaded');
  const dataset = (await uploaded.json()) as { id: string };

  await t.test('a history import through a crash of the database', async (t) => {
    const queued = await fetch(`${a!.base}/api/organizations/${drill.org.id}/history-imports`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ dataset_id: dataset.id }),
    });
    t.equal(queued.status, 202, 'the import is queued');
    const job = (await queued.json()) as Job;
    const mid = await waitFor(job.id, (j) => j.stage === 'importing' && j.progress > 0.05);
    t.ok(mid.progress < 0.9, `the database crashes with the import ${Math.round(mid.progress * 100)} % done`);
    await drill.pg.stop('immediate');
    await sleep(3_000);
    await drill.pg.start();

    const done = await waitFor(job.id, (j) => j.status !== 'queued' && j.status !== 'running');
    t.equal(done.status, 'succeeded', `the import finished: ${done.error ?? ''}`);
    t.equal(done.summary!.imported, rows, `all ${rows} rows counted as this job's`);
    t.equal(done.summary!.skipped_existing, 0, 'none taken for another transaction');
    const sql = postgres(drill.pg.url, { max: 1, onnotice: () => {} });
    try {
      const [stored] = await sql<{ rows: number; ids: number }[]>`
        SELECT count(*)::int AS rows, count(DISTINCT transaction_id)::int AS ids FROM transactions WHERE import_job_id = ${job.id}`;
      t.equal(stored!.rows, rows, 'every row is stored');
      t.equal(stored!.ids, stored!.rows, 'each once');
    } finally {
      await sql.end();
    }
    t.equal(await attempts(job.id), 1, 'the outage is not counted as an attempt');
  });

  await t.test("a dataset's scoring whose end is written once the database is back", async (t) => {
    const queued = await fetch(`${a!.base}/api/datasets/score`, { method: 'POST', headers, body: JSON.stringify({ dataset_id: dataset.id }) });
    const job = (await queued.json()) as Job;
    await waitFor(job.id, (j) => j.status === 'running');
    // Stopped for longer than the job's work takes: it ends while the database is away.
    await drill.pg.stop('fast');
    await sleep(8_000);
    await drill.pg.start();

    const done = await waitFor(job.id, (j) => j.status !== 'queued' && j.status !== 'running');
    t.equal(done.status, 'succeeded', `the job finished: ${done.error ?? ''}`);
    const result = await (await fetch(`${a!.base}/api/jobs/${job.id}/result?page_size=10`, { headers })).json();
    t.equal(result.total_rows, rows, 'every row scored');
    t.equal(await attempts(job.id), 1, 'scored once: the end waited for the database, the work was not done again');
  });

  t.same(drill.exits(), [], 'neither process exited');
});
