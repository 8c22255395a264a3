// /api/health's report of the live feed, through the real app on the embedded database: current
// while the tail reads (it reads at least every second), and behind, with the status degraded,
// once its last successful read is older than three polls (here: the tail stopped, as a stalled
// read would leave it). The outage case (the database unavailable) is in database-restart.test.ts.

import t from 'tap';
import { FEED_BEHIND_MS } from '../../src/app/feed-health.ts';
import { start } from '../support/server.ts';

t.test('health reports the feed current, then behind when its reads stop', async (t) => {
  const running = await start();
  t.teardown(() => running.close());
  const health = async () => (await running.app.inject({ method: 'GET', url: '/api/health' })).json();

  const current = await health();
  t.equal(current.status, 'ok');
  t.equal(current.feed.state, 'current', 'the tail has read since the start');
  t.equal(current.feed.reason, null);
  t.ok(current.feed.lag_ms >= 0 && current.feed.lag_ms <= FEED_BEHIND_MS, `lag ${current.feed.lag_ms} ms`);
  t.equal(current.feed.waiting_on_transactions, 0, 'one process on the embedded database waits on nothing');
  t.ok(Date.parse(current.feed.last_read_at) <= Date.now(), 'last_read_at is a time');

  await running.service.tail.stop();
  await new Promise((resolve) => setTimeout(resolve, FEED_BEHIND_MS + 300));
  const behind = await health();
  t.equal(behind.feed.state, 'behind', 'no read for over three polls: behind');
  t.equal(behind.feed.reason, 'reads_late');
  t.ok(behind.feed.lag_ms > FEED_BEHIND_MS, `lag ${behind.feed.lag_ms} ms`);
  t.equal(behind.status, 'degraded', 'the service reports itself degraded');
  t.equal(behind.database.status, 'ok', 'while the database itself answers');
});
