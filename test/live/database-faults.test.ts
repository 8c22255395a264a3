// Faults between the service and PostgreSQL, through a proxy (test/support/fault-drill.ts), under
// v1 traffic on two real server processes: the database stops answering without closing anything
// (a blackhole, as a partition or a stalled failover looks), its answers stop arriving (one
// direction cut), every connection is reset every second, and every packet is delayed. Throughout:
// no process exits, every request is answered within its deadline (SCORE_DEADLINE_SECONDS, 2 s)
// plus a second, refusals are 503 `database_unavailable` with Retry-After, scoring comes back by
// itself within 2 s of the fault ending, the decision log holds every acknowledged transaction
// exactly once, the public sandbox scores throughout, and every webhook event of a blocked payment
// is delivered once the database is back. `npm run bench:faults` runs the same drill at full length.

import t from 'tap';
import { FaultDrill, HANG_MS, percentile, sleep, type Answer } from '../support/fault-drill.ts';
import { needs } from '../support/components.ts';
import type { ServerProcess } from '../support/processes.ts';

const DEADLINE_MS = 2_000;

t.test('faults between the service and PostgreSQL under v1 traffic', { skip: needs('own-postgres') }, async (t) => {
  const drill = await FaultDrill.start();
  t.teardown(async () => {
    // What the processes logged, for a failure's report.
    if (!t.passing()) {
      for (const s of drill.servers) {
        const errors = s
          .stdout()
          .split('\n')
          .filter((l) => /internal error/.test(l));
        t.comment(`${s.base}: ${errors.slice(0, 20).join('\n')}\n…\n${s.stderr().slice(-3000)}`);
      }
    }
    await drill.stop();
  });
  // The public sandbox needs no database: a guest's score is answered throughout (its history is
  // built on first use, so that is done first).
  const sandbox = async () =>
    fetch(`${drill.servers[0]!.base}/api/risk/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 42, customer_id: 'C000001', merchant_id: 'M0001' }),
      signal: AbortSignal.timeout(HANG_MS * 4),
    });
  t.equal((await sandbox()).status, 200, 'the sandbox scores before any fault');
  const traffic = drill.traffic(4);
  const within = (from: number, to: number): Answer[] => [...traffic.answers.values()].flat().filter((x) => x.sentAt >= from && x.sentAt < to);
  await sleep(1_000);

  const phases: { name: string; began: number; ended: number }[] = [];
  const phaseOf = (x: Answer) => phases.find((p) => x.sentAt >= p.began && x.sentAt < p.ended + 3_000)?.name ?? 'no fault';
  /** Runs a fault for `ms`, then forwards normally for `after` ms; what was sent meanwhile. */
  const fault = async (name: string, begin: () => void, ms: number, after = 3_000) => {
    const began = performance.now();
    begin();
    await sleep(ms);
    const ended = performance.now();
    phases.push({ name, began, ended });
    drill.proxy.resume();
    await sleep(after);
    const during = within(began, ended);
    const slowest = Math.max(0, ...during.map((x) => x.ms));
    t.ok(
      slowest <= DEADLINE_MS + 1_000,
      `${name}: every request sent during it answered within the deadline + 1 s (slowest ${Math.round(slowest)} ms of ${during.length})`,
    );
    return { began, ended, during };
  };

  // A blackhole: health answers and says so; scoring is refused quickly, and back within 2 s.
  {
    const health = fetch(`${drill.servers[0]!.base}/api/health`, { signal: AbortSignal.timeout(HANG_MS) });
    const { ended, during } = await fault(
      'blackhole',
      () => {
        drill.proxy.blackhole();
        void sleep(3_000).then(async () => {
          const started = performance.now();
          const h = await (await fetch(`${drill.servers[1]!.base}/api/health`, { signal: AbortSignal.timeout(HANG_MS) })).json();
          t.equal(h.database.status, 'unavailable', `blackhole: health says the database is unavailable (in ${Math.round(performance.now() - started)} ms)`);
          const guest = await sandbox();
          t.equal(guest.status, 200, `blackhole: the public sandbox still scores (${guest.status} ${(await guest.text()).slice(0, 200)})`);
        });
      },
      6_000,
    );
    await health;
    t.ok(
      during.some((x) => x.status === 503),
      `blackhole: requests were refused (${during.filter((x) => x.status === 503).length} of ${during.length})`,
    );
    const firstOk = Math.min(
      ...[...traffic.answers.values()]
        .flat()
        .filter((x) => x.status === 200 && x.at >= ended)
        .map((x) => x.at),
    );
    t.ok(firstOk - ended <= 2_000, `blackhole: the first 200 came ${Math.round(firstOk - ended)} ms after forwarding resumed`);
  }

  // The server's answers stop arriving while the service's statements still reach it.
  await fault('answers cut', () => drill.proxy.cut('to_client'), 4_000);

  // Every connection reset each second.
  {
    let storm: NodeJS.Timeout | undefined;
    const { during } = await fault(
      'reset storm',
      () => {
        storm = setInterval(() => drill.proxy.reset(), 1_000);
      },
      8_000,
    );
    clearInterval(storm);
    const answered = during.filter((x) => x.status === 200).map((x) => x.ms);
    t.ok(
      percentile(answered, 99) <= DEADLINE_MS,
      `reset storm: p99 of the answered requests ${Math.round(percentile(answered, 99))} ms (${answered.length} answered 200 of ${during.length})`,
    );
  }

  // Every packet 100 ms late: slower, but answered.
  {
    const { during } = await fault('latency', () => drill.proxy.latency(100), 3_000);
    t.ok(
      during.filter((x) => x.status === 200).length > during.length / 2,
      `latency: most requests answered 200 (${during.filter((x) => x.status === 200).length} of ${during.length})`,
    );
  }

  await traffic.stop();
  t.same(traffic.hung, [], 'no request hung');
  t.same(drill.exits(), [], 'no process exited');
  const all = [...traffic.answers.values()].flat();
  const wrong = all.filter((x) => x.status !== 200 && (x.status !== 503 || x.reason !== 'database_unavailable' || !(Number(x.retryAfter) > 0)));
  t.same(
    wrong.map((x) => `${phaseOf(x)}: ${x.status} ${x.text.slice(0, 200)}`),
    [],
    'every refusal is 503 database_unavailable with Retry-After',
  );

  t.same(await drill.settle(traffic.answers), [], 'every refused transaction is answered 200 when sent again');
  const audit = await drill.audit(traffic.answers);
  t.equal(audit.stored, traffic.answers.size, `all ${traffic.answers.size} transactions are stored`);
  t.same(audit.missing, [], 'no acknowledged transaction is missing');
  t.same(audit.duplicates, [], 'none is stored twice');
  t.same(audit.differing, [], 'every 200 for an id carries the one stored decision');
  const blocked = [...traffic.answers.values()].filter((tries) => tries.some((x) => x.status === 200 && JSON.parse(x.text).decision === 'block')).length;
  t.same(await drill.undelivered(traffic.answers), [], `every blocked payment's webhook event was delivered after the faults (${blocked} events)`);
  // Each process's feed resumed: a transaction one records counts in the other's features.
  const [a, b] = drill.servers as [ServerProcess, ServerProcess];
  const feed = await drill.feedCarries(a, b);
  t.ok(feed.seen, `B's feed caught up: it counts A's transaction (${Math.round(feed.ms)} ms)`);
  // Stopped here, not only in the teardown: stopped from tap's teardown after the traffic, the test
  // process did not exit (it spun until tap's timeout; not understood yet).
  await drill.stop();
});
