// Crash safety with real server processes, started as `npm start` starts them (scripts/start.mjs,
// the compiled dist/main.js), on real sockets: a server killed
// (SIGKILL) in the middle of a job, then started again on the same data, takes the job up and
// finishes it, with its upload intact; and two servers on one PostgreSQL share the queue without
// running any job twice.

import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { backends, freshDatabase, tempDir } from '../support/server.ts';
import { needs } from '../support/components.ts';
import { listeningOn } from '../support/processes.ts';

function server(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  // A port the system gives, read from the ready line (never one picked free beforehand).
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (d: Buffer) => {
      text += d.toString();
      const url = listeningOn(text);
      if (url) resolve({ child, url });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${text.slice(-800)}`)));
  });
}

const stopped = (child: ChildProcess) => new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
const json = async (res: Response) => (await res.json()) as Record<string, any>;
const big = toCsv(simulate({ seed: 8, customers: 1500, merchants: 300, days: 40, rings: 2 }));

async function upload(url: string, csv: string): Promise<string> {
  const res = await fetch(`${url}/api/datasets/upload`, { method: 'POST', body: csv, headers: { 'content-type': 'text/csv' } });
  const body = await json(res);
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  return body.id;
}

async function waitJob(url: string, id: string, until: (j: Record<string, any>) => boolean, ms = 240_000): Promise<Record<string, any>> {
  const end = Date.now() + ms;
  for (;;) {
    const j = await json(await fetch(`${url}/api/jobs/${id}`));
    if (until(j)) return j;
    if (Date.now() > end) throw new Error(`job ${id} stuck: ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const backend of backends()) {
  t.test(`a server killed in the middle of a job, then restarted (${backend.name})`, async (t) => {
    const dataDir = tempDir('crash-');
    const db = backend.databaseUrl ? await freshDatabase(backend.databaseUrl) : undefined;
    // One teardown, in order: the server stops before its database is dropped (a server still
    // running would reconnect between DROP's terminating its sessions and the drop itself).
    let b: { child: ChildProcess; url: string } | undefined;
    t.teardown(async () => {
      if (b) {
        b.child.kill('SIGTERM');
        await stopped(b.child);
      }
      await db?.drop();
    });
    const env = { DATA_DIR: dataDir, DATABASE_URL: db?.url ?? '', JOB_STALE_SECONDS: '2' };
    const a = await server(env);
    const dataset = await upload(a.url, big);
    const job = await json(
      await fetch(`${a.url}/api/datasets/score`, {
        method: 'POST',
        body: JSON.stringify({ dataset_id: dataset }),
        headers: { 'content-type': 'application/json' },
      }),
    );
    const mid = await waitJob(a.url, job.id, (j) => j.status === 'running' && j.progress > 0);
    t.ok(mid.progress < 1, `killed at ${mid.stage} ${Math.round(mid.progress * 100)} %`);
    a.child.kill('SIGKILL');
    await stopped(a.child);

    b = await server(env);
    const again = await json(await fetch(`${b.url}/api/datasets/${dataset}`));
    t.equal(again.id, dataset, 'the upload survived');
    const done = await waitJob(b.url, job.id, (j) => j.status === 'succeeded' || j.status === 'failed');
    t.equal(done.status, 'succeeded', JSON.stringify(done.error ?? ''));
    const result = await json(await fetch(`${b.url}/api/jobs/${job.id}/result?page_size=10`));
    t.equal(result.total_rows, big.trim().split('\n').length - 1, 'every row scored once');
  });
}

const pg = backends().find((b) => b.name === 'postgres');
t.test('two servers on one PostgreSQL share the queue and never run a job twice', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(pg!.databaseUrl!);
  // Servers that share a queue share DATA_DIR too (the uploaded files): docs/operating.md.
  const shared = tempDir('two-shared-');
  const servers: { child: ChildProcess }[] = [];
  // Servers stop before their database is dropped (see the test above).
  t.teardown(async () => {
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => stopped(s.child)));
    await db.drop();
  });
  const a = await server({ DATA_DIR: shared, DATABASE_URL: db.url, MAX_RUNNING_JOBS: '4' });
  servers.push(a);
  const b = await server({ DATA_DIR: shared, DATABASE_URL: db.url, MAX_RUNNING_JOBS: '4' });
  servers.push(b);
  const small = toCsv(simulate({ seed: 3, customers: 150, merchants: 30, days: 10, rings: 1 }));
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const via = i % 2 ? a : b;
    const dataset = await upload(via.url, small);
    const job = await json(
      await fetch(`${via.url}/api/datasets/score`, {
        method: 'POST',
        body: JSON.stringify({ dataset_id: dataset }),
        headers: { 'content-type': 'application/json' },
      }),
    );
    ids.push(job.id);
  }
  for (const id of ids) {
    const j = await waitJob(a.url, id, (x) => x.status === 'succeeded' || x.status === 'failed');
    t.equal(j.status, 'succeeded', id);
  }
  const postgres = (await import('postgres')).default;
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const rows = await sql.unsafe(`SELECT id, attempts, claimed_by FROM jobs`);
  await sql.end();
  t.equal(rows.length, 8);
  t.ok(
    rows.every((r) => r.attempts === 1),
    'every job ran exactly once',
  );
  const perServer: Record<string, number> = {};
  for (const r of rows) perServer[r.claimed_by] = (perServer[r.claimed_by] ?? 0) + 1;
  t.comment(`jobs per server: ${JSON.stringify(Object.values(perServer))}`);
});
