// Snapshot pieces put aside on disk (src/storage/snapshot-spill.ts) read back byte for byte, in
// order and at their lengths, and leave no file in their directory, open or closed; and a
// snapshot stored from them reads back the same on both back ends.

import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { spillPieces } from '../../src/storage/snapshot-spill.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { eachBackend } from '../support/backends.ts';
import { tempDir } from '../support/temp.ts';

const pieces = () => [randomBytes(5), Buffer.alloc(0), randomBytes(300_000), randomBytes(1)];

t.test('pieces put aside read back as they were, and no file is left', async (t) => {
  const dir = tempDir('spill-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const written = pieces();
  const spilled = await spillPieces(dir, written);
  t.same(readdirSync(dir), [], 'the file has no name while it is open');
  t.equal(spilled.count, 4);
  t.equal(spilled.bytes, 300_006);
  const read: Uint8Array[] = [];
  for await (const p of spilled.pieces()) read.push(p);
  t.same(
    read.map((p) => Buffer.from(p).toString('hex')),
    written.map((p) => p.toString('hex')),
    'each piece, in order, at its length',
  );
  await spilled.close();
  await spilled.close();
  t.same(readdirSync(dir), [], 'nothing after it is closed');
});

eachBackend('a snapshot stored from pieces put aside reads back the same', async (t, fx) => {
  const db = await fx.open();
  const dir = tempDir('spill-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
  const written = pieces();
  const spilled = await spillPieces(dir, written);
  const scope = organizationData(db, 'org_a');
  const meta = { format: 'f1', labelDelay: 7, floor: 1, seen: { xmin: 1, xmax: 1, running: new Set<number>() }, transactions: 3, writtenAt: 5 };
  t.equal(await scope.history.writeSnapshot(meta, spilled), true, 'stored');
  await spilled.close();
  const stored = await scope.history.snapshot();
  t.match(stored, { format: 'f1', pieces: 4, bytes: 300_006 });
  const back = await db.query<{ bytes: Uint8Array }>(`SELECT bytes FROM history_snapshot_pieces WHERE organization_id = 'org_a' ORDER BY piece`);
  t.same(
    back.map((p) => Buffer.from(p.bytes).toString('hex')),
    written.map((p) => p.toString('hex')),
    'the same bytes',
  );
});
