// The public sandbox starts without simulating once its figures are kept: the first start under a
// data directory simulates and keeps them; the next reads them; the history and rings are built on
// first use, and the rows they are built from decide when kept figures disagree with them. The
// build is kept too, and read back at the next start unless other code or settings made it. The
// build runs on a thread of its own: the event loop goes on turning while it runs.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Sandbox } from '../../src/app/sandbox.ts';
import { DEFAULT_LABEL_DELAY_MS } from '../../src/domain/history/history.ts';
import { tempDir } from '../support/temp.ts';

t.test('figures are kept under the data directory and read at the next start', async (t) => {
  const dir = tempDir('sandbox-');
  const first = new Sandbox(DEFAULT_LABEL_DELAY_MS, dir);
  const file = join(dir, 'sandbox', 'example.json');
  const kept = JSON.parse(readFileSync(file, 'utf8'));
  t.same(kept.example, first.example, "the first start keeps the example's figures");

  // A kept file the next start must read instead of simulating: its figures are the file's.
  kept.example.description = 'read from the kept file';
  writeFileSync(file, JSON.stringify(kept));
  const second = new Sandbox(DEFAULT_LABEL_DELAY_MS, dir);
  t.equal(second.example.description, 'read from the kept file', 'the next start read the file, not the simulator');
  t.equal(second.asOf, first.asOf);
  t.same(second.locations, first.locations);

  // First use builds the history from the simulated rows, which decide: the figures are corrected
  // and kept again. The event loop turns meanwhile (built on the event loop, it would not once).
  let turns = 0;
  const ticking = setInterval(() => turns++, 5);
  const built = await second.built();
  clearInterval(ticking);
  t.ok(turns >= 20, `the event loop went on while the sandbox was built (${turns} turns of 5 ms)`);
  t.equal(second.built(), second.built(), 'later uses share the build');
  const history = built.history;
  t.equal(history.size, first.example.rows, 'the history holds every example row');
  t.same(second.example, first.example, 'figures that disagree with the rows are replaced on first use');
  t.same(JSON.parse(readFileSync(file, 'utf8')).example, first.example, 'and kept');
  t.equal(history.newest + 1000, second.asOf, 'scores are made a second after the newest transaction');
  const locations = new Set<string>();
  for (let k = 0; k < history.transactions.length; k++) locations.add(history.transactions.location(k));
  t.same([...locations].sort(), second.locations, "the kept locations are the history's");
  t.ok(built.ringIndex.rings.length > 0, 'rings are found on first use');
});

t.test('a kept file for other settings is not used', async (t) => {
  const dir = tempDir('sandbox-');
  new Sandbox(DEFAULT_LABEL_DELAY_MS, dir);
  const file = join(dir, 'sandbox', 'example.json');
  const kept = JSON.parse(readFileSync(file, 'utf8'));
  kept.example.description = 'for another label delay';
  writeFileSync(file, JSON.stringify(kept));
  const other = new Sandbox(DEFAULT_LABEL_DELAY_MS * 2, dir);
  t.not(other.example.description, 'for another label delay', 'a different label delay simulates afresh');
  writeFileSync(file, '{ not json');
  t.ok(new Sandbox(DEFAULT_LABEL_DELAY_MS, dir).example.rows > 0, 'an unreadable file is simulated past');
});

t.test('the built history and rings are kept, and read at the next start for the same code and settings', async (t) => {
  const dir = tempDir('sandbox-');
  const first = await new Sandbox(DEFAULT_LABEL_DELAY_MS, dir).built();
  const rings = first.ringIndex.rings;
  const built = join(dir, 'sandbox', 'built.json');
  const kept = JSON.parse(readFileSync(built, 'utf8'));
  t.same(kept.rings, JSON.parse(JSON.stringify(rings)), 'the first use keeps the rings beside the history');

  // A kept build the next start must read instead of building: its rings are the file's.
  kept.rings = kept.rings.slice(0, 1);
  writeFileSync(built, JSON.stringify(kept));
  const second = await new Sandbox(DEFAULT_LABEL_DELAY_MS, dir).built();
  t.equal(second.ringIndex.rings.length, 1, 'the next start read the kept build, not the simulator');
  t.equal(second.history.size, first.history.size, 'the history read back holds every row');
  const k = first.history.size - 1;
  t.same(
    [second.history.transactions.transactionId(k), second.history.transactions.amount(k), second.history.newest],
    [first.history.transactions.transactionId(k), first.history.transactions.amount(k), first.history.newest],
    'and the same rows',
  );

  // Made by other code (another key): built afresh, and kept again for this code.
  writeFileSync(built, JSON.stringify({ ...kept, key: 'made by other code' }));
  const third = await new Sandbox(DEFAULT_LABEL_DELAY_MS, dir).built();
  t.equal(third.ringIndex.rings.length, rings.length, 'a build for another key is built afresh');
  t.not(JSON.parse(readFileSync(built, 'utf8')).key, 'made by other code', 'and kept for this one');
  writeFileSync(join(dir, 'sandbox', 'history.bin'), 'not a history');
  t.equal((await new Sandbox(DEFAULT_LABEL_DELAY_MS, dir).built()).history.size, first.history.size, 'an unreadable history is built past');
});
