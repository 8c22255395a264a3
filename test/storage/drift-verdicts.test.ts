// A completed week's drift verdict on both back ends: stored once per organization and week, and a
// change from the week before announced once (a `drift.verdict_changed` event, with a delivery for
// each endpoint subscribed), however many processes store it at the same moment; no change, an
// unknown verdict on either side, or an organization without a subscribed endpoint: no event.

import type { Queryable } from '../../src/storage/db.ts';
import { organizationsWatchingDrift, recordVerdict, storedVerdict } from '../../src/storage/drift-verdicts.ts';
import { eachBackend } from '../support/backends.ts';

async function organization(db: Queryable, id: string, events: string[] | null): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING`, ['u1', 'u1@example.com']);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ($1, $1, 'test', 'u1')`, [id]);
  if (events) {
    await db.query(
      `INSERT INTO webhook_endpoints (id, organization_id, url, events, status, secret_sealed, created_by) VALUES ($1, $2, 'https://example.com/h', $3, 'enabled', 'v1.x', 'u1')`,
      [`we_${id}`, id, events],
    );
  }
}

const week = (w: string, verdict: string | null) => ({
  week: w,
  verdict,
  reasons: verdict === 'degraded' ? ['calibration'] : [],
  basis: verdict ? 'outcomes' : null,
});

eachBackend('a changed verdict is announced once, whoever stores it', async (t, fx) => {
  const db = await fx.open();
  await organization(db, 'org_a', ['drift.verdict_changed']);
  await organization(db, 'org_b', ['rule.changed']);
  await organization(db, 'org_c', null);
  t.same(await organizationsWatchingDrift(db), ['org_a'], 'only organizations with a subscribed endpoint');

  // Four "processes" store the same week at once: one stores it and announces the change.
  const results = await Promise.all(Array.from({ length: 4 }, () => recordVerdict(db, 'org_a', week('2026-W47', 'degraded'), week('2026-W46', 'ok'))));
  t.equal(results.filter(Boolean).length, 1, 'announced once');
  t.match(await storedVerdict(db, 'org_a', '2026-W47'), { verdict: 'degraded', reasons: ['calibration'], basis: 'outcomes' });
  const events = await db.query<{ type: string; payload: Record<string, unknown> }>(`SELECT type, payload FROM webhook_events WHERE organization_id = 'org_a'`);
  t.same(events, [
    {
      type: 'drift.verdict_changed',
      payload: { week: '2026-W47', verdict: 'degraded', previous_verdict: 'ok', previous_week: '2026-W46', reasons: ['calibration'], basis: 'outcomes' },
    },
  ]);
  t.equal((await db.query(`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = 'we_org_a'`)).length, 1, 'one delivery, to the subscribed endpoint');

  t.equal(await recordVerdict(db, 'org_a', week('2026-W48', 'degraded'), week('2026-W47', 'degraded')), false, 'no change, no event');
  t.equal(await recordVerdict(db, 'org_a', week('2026-W49', 'ok'), week('2026-W48', null)), false, 'an unknown verdict before: no event');
  t.equal(await recordVerdict(db, 'org_b', week('2026-W47', 'degraded'), week('2026-W46', 'ok')), true, 'a change is stored and announced…');
  t.equal(
    (await db.query(`SELECT 1 FROM webhook_events WHERE organization_id = 'org_b'`)).length,
    0,
    '…but with no subscribed endpoint nothing is written to the outbox',
  );
});
