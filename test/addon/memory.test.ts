// Start-up memory settling: one compacting collection returns garbage left by loading (without
// exposing `gc` to the application), and the allocator tuning is applied where glibc provides it.

import t from 'tap';
import { fixAllocatorThresholds, releaseFreeMemory } from '../../src/addon/addon.ts';
import { settleMemory } from '../../src/addon/memory.ts';

const glibc =
  process.platform === 'linux' &&
  (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime !== undefined;

t.test('settleMemory collects what start-up dropped', async (t) => {
  let garbage: { id: number; text: string }[] | undefined = Array.from({ length: 400_000 }, (_, i) => ({ id: i, text: `row ${i}` }));
  const withGarbage = process.memoryUsage().heapUsed;
  t.ok(garbage.length > 0);
  garbage = undefined;
  settleMemory();
  const after = process.memoryUsage().heapUsed;
  t.ok(withGarbage - after > 20_000_000, `heap fell by ${((withGarbage - after) / 1e6).toFixed(1)} MB`);
  t.equal((globalThis as { gc?: unknown }).gc, undefined, 'gc is not exposed to the application');
  settleMemory();
  t.pass('can run again');
});

t.test('allocator tuning where glibc has it', async (t) => {
  t.equal(fixAllocatorThresholds(), glibc);
  t.equal(typeof releaseFreeMemory(), 'boolean');
});
