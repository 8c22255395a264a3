// An organization's webhooks in the data layer, on both back ends: every method of its part
// (`organizationData(db, id).webhooks`) finds, changes and sends for that organization's endpoints
// only. Asked about another organization's endpoint or delivery by its id, it finds nothing and
// changes nothing, so a route cannot reach across organizations even with a guessed id.

import type { Queryable } from '../../src/storage/db.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { writeOutbox } from '../../src/storage/webhook-outbox.ts';
import { eachBackend } from '../support/backends.ts';

async function organizations(db: Queryable): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  for (const id of ['org_a', 'org_b']) await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ($1, $1, 'test', 'u1')`, [id]);
}

eachBackend("one organization's webhooks part never reaches another's", async (t, fx) => {
  const db = await fx.open();
  await organizations(db);
  const a = organizationData(db, 'org_a').webhooks;
  const b = organizationData(db, 'org_b').webhooks;
  const ea = await a.create({ id: 'we_a', url: 'https://a.example/h', description: null, events: ['outcome.recorded'], secretSealed: 'v1.a', by: 'u1' });
  const eb = await b.create({ id: 'we_b', url: 'https://b.example/h', description: 'B', events: ['outcome.recorded'], secretSealed: 'v1.b', by: 'u1' });
  t.same(
    (await a.all()).map((e) => e.id),
    ['we_a'],
  );
  t.same(
    (await b.all()).map((e) => e.id),
    ['we_b'],
  );
  t.notOk('secret_sealed' in ea, 'a listing row has no secret');

  // Events of each organization reach its own endpoint only.
  await db.transaction((tx) =>
    writeOutbox(tx, [
      { organizationId: 'org_a', type: 'outcome.recorded', payload: { n: 1 } },
      { organizationId: 'org_b', type: 'outcome.recorded', payload: { n: 2 } },
    ]),
  );
  const [da] = await a.deliveries('we_a', 10, null, null);
  const [db_] = await b.deliveries('we_b', 10, null, null);
  t.equal(da!.endpoint_id, 'we_a');
  t.equal(db_!.endpoint_id, 'we_b');
  t.same((await a.delivery('we_a', da!.id))!.payload, { n: 1 });

  // A, asked about B's ids, finds and changes nothing.
  t.equal(await a.one(eb.id), undefined);
  t.equal(await a.change(eb.id, { status: 'disabled' }), undefined);
  t.equal(await a.rotate(eb.id, 'v1.x', 60), undefined);
  t.equal(await a.secrets(eb.id), undefined);
  t.same(await a.deliveries(eb.id, 10, null, null), []);
  t.equal(await a.delivery(eb.id, db_!.id), undefined);
  t.equal(await a.delivery('we_a', db_!.id), undefined, "B's delivery under A's endpoint");
  t.equal(await a.redeliver(eb.id, db_!.id), undefined);
  t.equal(await a.redeliver('we_a', db_!.id), undefined);
  t.equal(await a.sendTest(eb.id, {}), undefined);
  t.equal(await a.delete(eb.id), false);
  t.match(await b.one(eb.id), { status: 'enabled', url: 'https://b.example/h' }, "B's endpoint is as it was");
  t.same(await b.secrets(eb.id), { current: 'v1.b', previous: null });
  t.equal((await b.deliveries('we_b', 10, null, null)).length, 1, 'and its log too');
});
