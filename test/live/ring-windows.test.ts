// Rings that keep up, end to end through the real app on each storage back end, with the service's
// clock moved across a window's publication (its end plus the label delay): before it, nothing is
// queued and no score names the ring; after it, one `rings` job analyses the window (however often
// and by however many callers it is asked for), stores the result, and the organization's scores
// (`related_ring`) and GET /api/metrics/rings with its key show it. Another organization with the
// same merchant ids sees none of it. A window is read in slices, every row once and in order.

import t from 'tap';
import { DEFAULT_LABEL_DELAY_MS } from '../../src/domain/history/history.ts';
import { CATCH_UP_WINDOWS, dueWindows, queueDueWindows, WEEK, windowStart } from '../../src/live/ring-windows.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { decodeWindow, WINDOW_SLICE_MS } from '../../src/storage/rings-store.ts';
import { backends } from '../support/server.ts';
import { startLive } from '../support/accounts.ts';

const HOUR = 3_600_000;

for (const backend of backends()) {
  t.test(`ring windows on ${backend.name}`, async (t) => {
    const realNow = Date.now();
    let offset = 0;
    const live = await startLive({ backend, clock: () => Date.now() + offset });
    t.teardown(() => live.close());
    const { service } = live.s;
    const acme = await live.organization('Acme');
    const bolt = await live.organization('Bolt');

    // Last week's window: four customers paying two merchants again and again, all fraud known a
    // day later; around them, ordinary customers at an ordinary shop.
    const start = windowStart(realNow) - WEEK;
    const end = start + WEEK;
    const rows: NewTransaction[] = [];
    let n = 0;
    const add = (customer: string, merchant: string, label: 0 | 1) => {
      const time = start + HOUR + n * 60_000;
      rows.push({
        transaction_id: `w-${n++}`,
        time,
        amount: 25,
        customer_id: customer,
        merchant_id: merchant,
        location: 'Lisbon',
        payment_type: 'online',
        source: 'import',
        label,
        label_known_ms: time + 24 * HOUR,
      });
    };
    for (let round = 0; round < 3; round++) for (const c of ['r1', 'r2', 'r3', 'r4']) for (const m of ['rm1', 'rm2']) add(c, m, 1);
    for (let c = 0; c < 30; c++) for (let k = 0; k < 2; k++) add(`c${c}`, 'shop', 0);
    await organizationData(service.db, acme.id).transactions.insert(rows);
    const probe = { amount: 30, customer_id: 'newcomer', merchant_id: 'rm1', location: 'Lisbon', payment_type: 'online' };
    const jobs = async () =>
      (await service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE kind = 'rings' AND params->>'organization_id' = $1`, [acme.id]))[0]!.n;

    await t.test('before the window is published: nothing queued, no ring named', async (t) => {
      offset = end + DEFAULT_LABEL_DELAY_MS - HOUR - Date.now();
      await service.rings.tick();
      t.equal(await jobs(), 0, 'no job');
      const scored = (await live.score(acme, { ...probe, transaction_id: 'before' })).json();
      t.equal(scored.related_ring, null);
    });

    await t.test('once published: one job analyses it, and scores and the rings endpoint show it', async (t) => {
      offset = end + DEFAULT_LABEL_DELAY_MS + HOUR - Date.now();
      const [first, second] = await Promise.all([service.rings.tick(), queueDueWindows(service.db, Date.now() + offset, service.labelDelay)]);
      void first;
      t.ok(second === 0 || second === 1, 'a second caller may win the window, never both');
      await service.rings.tick();
      t.equal(await jobs(), 1, 'one job for the window, however often it was asked for');
      // The job runs in this process's runner; its NOTIFY reads the result into the tenant. The
      // analysis is stored first, then the job marked finished: wait for the job.
      let job: { status: string; result: { flagged: number } } | undefined;
      for (let i = 0; i < 200 && !(job && ['succeeded', 'failed'].includes(job.status)); i++) {
        [job] = await service.db.query<{ status: string; result: { flagged: number } }>(`SELECT status, result FROM jobs WHERE kind = 'rings'`);
        if (!(job && ['succeeded', 'failed'].includes(job.status))) await new Promise((r) => setTimeout(r, 50));
      }
      t.match(job, { status: 'succeeded', result: { flagged: 1 } });
      const [stored] = await service.db.query<{ rings: { ring_id: string; merchants: string[] }[] }>(
        'SELECT rings FROM ring_windows WHERE organization_id = $1 AND rings IS NOT NULL',
        [acme.id],
      );
      t.ok(stored, 'the analysis was stored');
      t.same(
        stored!.rings.map((r) => r.merchants),
        [['rm1', 'rm2']],
        'the two merchants form the ring',
      );
      await service.rings.tick();
      const scored = (await live.score(acme, { ...probe, transaction_id: 'after' })).json();
      t.match(scored.related_ring, {
        ring_id: `ring-${new Date(start).toISOString().slice(0, 10)}-1`,
        matched_entity: 'rm1',
        role: 'merchant',
        members: 6,
        fraud_rate: 1,
      });
      t.equal(scored.related_ring.window_end, new Date(end).toISOString());
      const listed = (await live.s.app.inject({ url: '/api/metrics/rings', headers: { authorization: `Bearer ${acme.key}` } })).json();
      t.equal(listed.live.organization_id, acme.id);
      t.same(
        listed.live.groups.map((g: { merchants: string[] }) => g.merchants),
        [['rm1', 'rm2']],
      );
    });

    await t.test('a window is read in slices: every row once, in time order, across slice edges', async (t) => {
      // 2,500 rows over five slices of the window, in groups of seven at one time, a group exactly
      // on each slice edge; rows just before the window and at its end; the same times in another
      // organization.
      const from = start - 10 * WEEK;
      const rows2: NewTransaction[] = [];
      const step = (5 * WINDOW_SLICE_MS) / 2500;
      for (let i = 0; i < 2500; i++) {
        const group = Math.floor(i / 7);
        const time = group % 40 === 0 ? from + (group / 40) * WINDOW_SLICE_MS : from + Math.floor(group * 7 * step);
        rows2.push({
          transaction_id: `p-${i}`,
          time,
          amount: 1 + i,
          customer_id: `pc${i % 50}`,
          merchant_id: 'pm',
          location: 'Lisbon',
          payment_type: 'online',
          source: 'import',
          ...(i % 11 === 0 ? { label: 1 as const, label_known_ms: from + 5000 } : {}),
        });
      }
      rows2.sort((a, b) => a.time - b.time);
      rows2.push({
        transaction_id: 'p-before',
        time: from - 1,
        amount: 1,
        customer_id: 'x',
        merchant_id: 'pm',
        location: 'Lisbon',
        payment_type: 'online',
        source: 'import',
      });
      rows2.push({
        transaction_id: 'p-after',
        time: from + WEEK,
        amount: 1,
        customer_id: 'x',
        merchant_id: 'pm',
        location: 'Lisbon',
        payment_type: 'online',
        source: 'import',
      });
      await organizationData(service.db, acme.id).transactions.insert(rows2);
      await organizationData(service.db, bolt.id).transactions.insert(rows2.slice(0, 300).map((r) => ({ ...r, amount: 99_999 })));
      const read = decodeWindow((await organizationData(service.db, acme.id).rings.window(from, from + WEEK)).rows);
      t.ok(rows2.filter((r) => (r.time - from) % WINDOW_SLICE_MS === 0 && r.time >= from && r.time < from + WEEK).length >= 5 * 7, 'rows on the slice edges');
      t.equal(read.length, 2500, 'every row of the window, once; none before it, at its end, or of another organization');
      t.same(
        read.map((r) => r.amount),
        rows2.slice(0, 2500).map((r) => r.amount),
        'in time order, rows of one time in the order recorded',
      );
      t.equal(read.filter((r) => r.label === 1).length, Math.ceil(2500 / 11), 'with their outcomes');
    });

    await t.test('another organization sees none of it', async (t) => {
      const scored = (await live.score(bolt, { ...probe, transaction_id: 'bolt-1' })).json();
      t.equal(scored.related_ring, null);
      const listed = (await live.s.app.inject({ url: '/api/metrics/rings', headers: { authorization: `Bearer ${bolt.key}` } })).json();
      t.same([listed.live.organization_id, listed.live.groups], [bolt.id, []]);
      const guest = (await live.s.app.inject({ url: '/api/metrics/rings' })).json();
      t.notOk(JSON.stringify(guest.live).includes('rm1'), 'nor does a guest');
      const bad = await live.s.app.inject({ url: '/api/metrics/rings', headers: { authorization: 'Bearer sk_test_nope' } });
      t.equal(bad.statusCode, 401, 'a wrong key is refused, not taken for a guest');
    });
  });
}

t.test("due windows: Mondays, ended a label delay ago; the latest few, or back to an import's oldest transaction", async (t) => {
  const now = Date.UTC(2026, 10, 23, 12); // a Monday noon
  const latest = dueWindows(now, DEFAULT_LABEL_DELAY_MS);
  t.equal(latest.length, CATCH_UP_WINDOWS);
  t.ok(
    latest.every((s) => new Date(s).getUTCDay() === 1 && new Date(s).getUTCHours() === 0),
    'each starts on a Monday at 00:00 UTC',
  );
  t.equal(latest[0], Date.UTC(2026, 10, 9), 'the newest due ended on 16 November, a label delay before now');
  t.ok(latest[0]! + WEEK + DEFAULT_LABEL_DELAY_MS <= now);
  const imported = dueWindows(now, DEFAULT_LABEL_DELAY_MS, Date.UTC(2026, 7, 5));
  t.equal(imported[imported.length - 1], Date.UTC(2026, 7, 3), "back to the window holding the import's oldest transaction");
  t.equal(imported.length, 15);
});
