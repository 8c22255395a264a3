// The durable job queue on both back ends: claims take the oldest queued job, never more than the
// running limit, and never the same job twice, even when two connections (two server processes on
// one PostgreSQL) claim at once; progress and results belong to the claiming worker only; a job
// whose worker stopped beating is queued again, then failed with its reason after max_attempts.

import { claimNext, createJob, failJob, finishJob, getJob, recoverStale, reportProgress } from '../../src/storage/job-queue.ts';
import type { Queryable } from '../../src/storage/db.ts';
import { eachBackend } from '../support/backends.ts';

async function dataset(db: Queryable, id: string): Promise<void> {
  await db.query(
    `INSERT INTO datasets (id, original_name, stored_name, size_bytes, rows, has_labels, mapping, validation, expires_at) VALUES ($1, 'f.csv', $2, 1, 1, false, '{}', '{}', now() + interval '1 hour')`,
    [id, `${'0'.repeat(24)}${id.slice(-8).padStart(8, '0')}.csv`],
  );
}

eachBackend('claims: oldest first, within the running limit, results only from the claimant', async (t, fx) => {
  const db = await fx.open();
  await dataset(db, 'ds_1');
  // Queued within one transaction, so all three have the same created_at (a tick of the clock):
  // the queue's order must still be the order they were queued in.
  const [a, b, c] = await db.transaction(async (tx) => [
    await createJob(tx, { dataset_id: 'ds_1', mode: 'balanced' }),
    await createJob(tx, { dataset_id: 'ds_1', mode: 'high_recall' }),
    await createJob(tx, { dataset_id: 'ds_1', mode: 'balanced' }),
  ]);
  t.equal(a.status, 'queued');
  const first = await claimNext(db, 'w1', 2);
  t.equal(first?.id, a.id, 'oldest first');
  t.equal(first?.status, 'running');
  t.equal(first?.attempts, 1);
  t.equal((await claimNext(db, 'w2', 2))?.id, b.id);
  t.equal(await claimNext(db, 'w3', 2), undefined, 'two already run: the limit holds');
  t.equal(await reportProgress(db, a.id, 'w1', 'scoring', 0.5), true);
  t.equal(await reportProgress(db, a.id, 'w2', 'scoring', 0.9), false, 'another worker cannot report on it');
  const seen = await getJob(db, a.id);
  t.same([seen?.stage, seen?.progress], ['scoring', 0.5]);
  t.equal(await finishJob(db, a.id, 'w1', { rows: 3 }), true);
  t.equal(await failJob(db, b.id, 'w2', 'the file could not be read'), true);
  const done = await getJob(db, a.id);
  t.same([done?.status, done?.progress, done?.result], ['succeeded', 1, { rows: 3 }]);
  t.equal((await getJob(db, b.id))?.error, 'the file could not be read');
  t.equal((await claimNext(db, 'w3', 2))?.id, c.id, 'room again once they ended');
});

eachBackend('two connections claiming at once never take the same job', async (t, fx) => {
  const one = await fx.open();
  await dataset(one, 'ds_2');
  for (let i = 0; i < 12; i++) await createJob(one, { dataset_id: 'ds_2', mode: 'balanced' });
  // PGlite is one process: two handles on one directory are refused, so it races within one handle.
  const two = fx.kind === 'postgres' ? await fx.open() : one;
  const claims = await Promise.all(Array.from({ length: 16 }, (_, i) => claimNext(i % 2 ? two : one, `w${i}`, 100)));
  const ids = claims.filter((c) => c !== undefined).map((c) => c!.id);
  t.equal(ids.length, 12, 'every job claimed');
  t.equal(new Set(ids).size, 12, 'no job claimed twice');
});

eachBackend('a job whose worker died is queued again, then failed after max_attempts', async (t, fx) => {
  const db = await fx.open();
  await dataset(db, 'ds_3');
  const job = await createJob(db, { dataset_id: 'ds_3', mode: 'balanced' });
  for (let attempt = 1; attempt <= 3; attempt++) {
    const claimed = await claimNext(db, `dead-${attempt}`, 2);
    t.equal(claimed?.attempts, attempt);
    await db.query(`UPDATE jobs SET heartbeat_at = now() - interval '10 minutes' WHERE id = $1`, [job.id]);
    const r = await recoverStale(db, 60_000, 'alive');
    if (attempt < 3) {
      t.same(r, { requeued: [job.id], failed: [] }, `attempt ${attempt}: queued again`);
      const again = await getJob(db, job.id);
      t.same([again?.status, again?.claimed_by, again?.progress], ['queued', null, 0]);
      t.equal(await reportProgress(db, job.id, `dead-${attempt}`, 'x', 0.1), false, 'the dead worker cannot write to it any more');
    } else {
      t.same(r, { requeued: [], failed: [job.id] }, 'third death: failed');
      t.match((await getJob(db, job.id))?.error, /stopped 3 times/);
    }
  }
  const fresh = await createJob(db, { dataset_id: 'ds_3', mode: 'balanced' });
  await claimNext(db, 'alive', 2);
  t.same(await recoverStale(db, 60_000, 'other'), { requeued: [], failed: [] }, 'a beating job is left alone');
  t.equal((await getJob(db, fresh.id))?.status, 'running');
  // A process whose event loop was held past the stale limit finds its own job's heartbeat late:
  // it is alive, so the job is running, and taking it back would run it twice.
  await db.query(`UPDATE jobs SET heartbeat_at = now() - interval '10 minutes' WHERE id = $1`, [fresh.id]);
  t.same(await recoverStale(db, 60_000, 'alive'), { requeued: [], failed: [] }, 'a process never takes its own running job for dead');
  t.same(await recoverStale(db, 60_000, 'other'), { requeued: [fresh.id], failed: [] }, 'another process does');
});

eachBackend("a finished or failed job's webhook events are written with its state, and only by its worker", async (t, fx) => {
  const db = await fx.open();
  await dataset(db, 'ds_4');
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
  await db.query(
    `INSERT INTO webhook_endpoints (id, organization_id, url, events, status, secret_sealed, created_by) VALUES ('we_a', 'org_a', 'https://a.example/h', '{job.succeeded,job.failed}', 'enabled', 'v1.a', 'u1')`,
  );
  const announce = (j: { id: string; status: string; organization_id: string | null }) => [
    { organizationId: j.organization_id!, type: `job.${j.status}`, payload: { id: j.id, status: j.status } },
  ];
  const ok = await createJob(db, { dataset_id: 'ds_4', mode: 'balanced', organization_id: 'org_a', owner_user_id: 'u1' });
  const bad = await createJob(db, { dataset_id: 'ds_4', mode: 'balanced', organization_id: 'org_a', owner_user_id: 'u1' });
  await claimNext(db, 'w1', 5);
  await claimNext(db, 'w1', 5);
  t.equal(await finishJob(db, ok.id, 'w2', {}, announce), false, 'not its worker: nothing');
  t.same(await db.query(`SELECT type FROM webhook_events`), [], 'and no event');
  t.equal(await finishJob(db, ok.id, 'w1', { rows: 1 }, announce), true);
  t.equal(await failJob(db, bad.id, 'w1', 'unreadable', announce), true);
  const events = await db.query<{ type: string; payload: { id: string; status: string } }>(`SELECT type, payload FROM webhook_events ORDER BY type DESC`);
  t.same(events, [
    { type: 'job.succeeded', payload: { id: ok.id, status: 'succeeded' } },
    { type: 'job.failed', payload: { id: bad.id, status: 'failed' } },
  ]);
  t.equal((await db.query(`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = 'we_a'`)).length, 2, 'each with its delivery');
});
