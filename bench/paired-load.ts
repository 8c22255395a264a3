// Two set-ups of the recorded route compared in the same run: rounds of API-key scoring alternate
// between a baseline server and a changed one (the order flipped each round, so drift in the host
// falls on both alike), and the ratio is of the medians. Every request is a new recorded
// transaction (bench/requests.ts). Used where one change to an organization (a webhook endpoint,
// a challenger) is to be priced against the same organization without it, and where one way of
// serving (through nginx to containers) against another (the same processes addressed directly).

import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { scoreRequests } from './requests.ts';

export interface Side {
  base: string;
  key: string;
}

/** One server and key, or several loaded at once (the connections shared between them), their
 *  throughput summed: two processes behind a balancer against the same two addressed directly. */
export type Sides = Side | Side[];

export interface Round {
  baseline: number;
  changed: number;
  baselineP99: number;
  changedP99: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `rounds` alternating loads of `seconds` each over `connections`; throws on any error answer. */
export async function pairedRounds(o: {
  baseline: Sides;
  changed: Sides;
  rounds: number;
  seconds: number;
  connections: number;
  label: string;
}): Promise<{ rounds: Round[]; ratio: number; baseline: number; changed: number }> {
  // Ids of this call's own: an organization measured again in a later call records new payments.
  const { newTransaction } = scoreRequests(`bench-${randomBytes(4).toString('hex')}`);
  const loadOne = (side: Side, connections: number, seconds: number) =>
    autocannon({
      url: `${side.base}/api/v1/risk/score`,
      method: 'POST',
      connections,
      duration: seconds,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${side.key}` },
      requests: [{ setupRequest: (req) => ({ ...req, body: newTransaction() }) }],
    }).then((r) => ({ rps: r.requests.average, p99: r.latency.p99, errors: r.non2xx + r.errors }));
  const load = async (sides: Sides, seconds: number) => {
    const list = Array.isArray(sides) ? sides : [sides];
    const each = await Promise.all(list.map((side) => loadOne(side, Math.max(1, Math.round(o.connections / list.length)), seconds)));
    return { rps: each.reduce((s, r) => s + r.rps, 0), p99: Math.max(...each.map((r) => r.p99)), errors: each.reduce((s, r) => s + r.errors, 0) };
  };
  await load(o.baseline, 2);
  await load(o.changed, 2);
  const rounds: Round[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const baselineFirst = r % 2 === 0;
    const first = await load(baselineFirst ? o.baseline : o.changed, o.seconds);
    const second = await load(baselineFirst ? o.changed : o.baseline, o.seconds);
    const [b, c] = baselineFirst ? [first, second] : [second, first];
    if (b.errors + c.errors > 0) throw new Error(`errors under load: ${b.errors} + ${c.errors}`);
    rounds.push({ baseline: b.rps, changed: c.rps, baselineP99: b.p99, changedP99: c.p99 });
    process.stderr.write(`round ${r + 1}: baseline ${Math.round(b.rps)} req/s, ${o.label} ${Math.round(c.rps)} req/s\n`);
  }
  const baseline = median(rounds.map((x) => x.baseline));
  const changed = median(rounds.map((x) => x.changed));
  return { rounds, ratio: changed / baseline, baseline, changed };
}

export { median };
