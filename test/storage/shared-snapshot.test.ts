// A transaction's snapshot shared with a connection of another thread (src/storage/shared-snapshot.ts),
// as a large history's load reads its rows on the thread that builds it: the reader sees exactly
// what the exporting transaction sees (not a row committed after it began, every row before it),
// and a snapshot that is no longer shared (its transaction over) fails with a plain reason that
// names neither the URL nor its password. PostgreSQL only: the embedded database has one
// connection and no exported snapshots.

import { Worker } from 'node:worker_threads';
import { CopyReader } from '../../src/storage/copy-binary.ts';
import type { SharedSnapshot } from '../../src/storage/db.ts';
import { inSharedSnapshot } from '../../src/storage/shared-snapshot.ts';
import { eachBackend } from '../support/backends.ts';

/** The first text column of every row a binary COPY of `select` sends, in the shared snapshot. */
async function idsIn(shared: SharedSnapshot, select: string): Promise<string[]> {
  return inSharedSnapshot(shared, async (copyOut) => {
    const ids: string[] = [];
    const reader = new CopyReader(1);
    for await (const chunk of copyOut(select))
      reader.push(Buffer.from(chunk), (bytes) => ids.push(bytes.toString('utf8', reader.starts[0]!, reader.starts[0]! + reader.lengths[0]!)));
    return ids;
  });
}

eachBackend(
  'a shared snapshot is read by another connection exactly as its transaction sees it',
  async (t, fx) => {
    const db = await fx.open();
    // Another pool on the same database: a write from outside the transaction.
    const other = await fx.open();
    await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com'), ('u2', 'u2@example.com')`);
    let shared: SharedSnapshot | undefined;
    const seen = await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      await tx.query('SELECT 1');
      shared = await tx.shareSnapshot!();
      // Committed after the snapshot was taken: not in it.
      await other.query(`INSERT INTO users (id, email) VALUES ('u3', 'u3@example.com')`);
      const here = (await tx.query<{ id: string }>('SELECT id FROM users ORDER BY id')).map((r) => r.id);
      const there = await idsIn(shared, 'SELECT id FROM users ORDER BY id');
      // And from another thread, as the history's load does.
      const worker = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
         import(workerData.module).then(async ({ inSharedSnapshot }) => {
           const n = await inSharedSnapshot(workerData.shared, async (copyOut) => { let bytes = 0; for await (const c of copyOut('SELECT id FROM users')) bytes += c.length; return bytes; });
           parentPort.postMessage(n);
         }, (e) => parentPort.postMessage(String(e)));`,
        { eval: true, workerData: { shared, module: new URL('../../src/storage/shared-snapshot.ts', import.meta.url).href } },
      );
      const bytes = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      await worker.terminate();
      return { here, there, bytes };
    });
    t.same(seen.here, ['u1', 'u2'], 'the exporting transaction does not see the later row');
    t.same(seen.there, seen.here, 'nor does the connection reading in its shared snapshot');
    t.equal(typeof seen.bytes, 'number', `read from another thread too (${String(seen.bytes)})`);
    t.same(
      (await db.query<{ id: string }>('SELECT id FROM users ORDER BY id')).map((r) => r.id),
      ['u1', 'u2', 'u3'],
      'the later row is stored',
    );

    // Its transaction over, the snapshot is no longer shared.
    const url = new URL(shared!.url);
    const failure = await idsIn(shared!, 'SELECT id FROM users').then(
      () => undefined,
      (e: Error) => e,
    );
    t.ok(failure instanceof Error, 'a snapshot no longer shared cannot be read');
    t.match(failure?.message ?? '', /shared database snapshot/, `a plain reason: ${failure?.message}`);
    t.notOk(failure?.message.includes(shared!.url), 'the URL is not in it');
    if (url.password) t.notOk(failure?.message.includes(decodeURIComponent(url.password)), 'nor the password');
  },
  { kind: 'postgres', because: 'the embedded database has one connection and no exported snapshots' },
);
