// A process's own scores reach its histories once, as they commit: the live tail's reads leave
// them out (it would otherwise read back every score the process answered, a page of rows every
// second on a busy server), while every write of another process still arrives through the tail,
// on both back ends.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor } from '../support/accounts.ts';
import type { FeedChange } from '../../src/storage/live-feed.ts';
import { recordGroup } from '../../src/storage/recorded-group.ts';

for (const backend of backends()) {
  t.test(`own scores on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { service } = live.s;
    const org = await live.organization('Acme');
    const body = (i: number) => ({ amount: 20 + i, customer_id: 'c-own', merchant_id: 'm-own', transaction_id: `own-${i}` });
    // The organization's tenant loaded before anything is counted.
    t.equal((await live.scoreLoaded(org, body(0))).statusCode, 200);
    await service.tail.catchUp();

    const delivered = new Map<string, number>();
    const apply = service.tenants.apply.bind(service.tenants);
    service.tenants.apply = (changes: readonly FeedChange[]) => {
      for (const c of changes) if (c.kind === 'transaction') delivered.set(c.transaction_id, (delivered.get(c.transaction_id) ?? 0) + 1);
      apply(changes);
    };
    for (let i = 1; i <= 5; i++) t.equal((await live.score(org, body(i))).statusCode, 200, `score ${i}`);
    // Two reads of the tail, each begun after the scores committed.
    await service.tail.catchUp();
    await service.tail.catchUp();
    t.same(
      [...delivered].sort(),
      [1, 2, 3, 4, 5].map((i) => [`own-${i}`, 1]),
      "each score reached the organization's history once (at its commit), none again through the tail",
    );

    // Another process's write, as it stores one: it arrives through the tail.
    await recordGroup(service.db, [
      {
        organizationId: org.id,
        row: {
          transaction_id: 'elsewhere-1',
          time: Date.now(),
          amount: 30,
          customer_id: 'c-own',
          merchant_id: 'm-own',
          location: 'Lisbon',
          payment_type: 'card_present',
          source: 'scored',
        },
      },
    ]);
    await service.tail.catchUp();
    t.equal(delivered.get('elsewhere-1'), 1, "another process's score arrives through the tail, once");
    const tenant = service.tenants.loadedNow(org.id)!;
    const held = (id: string) => tenant.history.transactions.find(id) >= 0;
    t.ok([1, 2, 3, 4, 5].every((i) => held(`own-${i}`)) && held('elsewhere-1'), 'the history holds all six');
  });
}
