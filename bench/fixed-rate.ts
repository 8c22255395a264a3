// Recorded scores at a fixed rate (autocannon's overall rate), for the benchmarks that ask how one
// thing (a history's load, an import) affects the requests of another organization: the latency
// at a rate the server sustains, not the most it can serve. autocannon sends each connection's
// share of a second as fast as answers come at the start of the second: the rate arrives in bursts,
// and a p99 is mostly how long a burst takes to drain (bench/README.md).
// Each connection's first answer is left out of the figures: a load starts with every connection
// opening and sending at once while the load generator's own code is still being compiled on the
// same cores, and those answers took up to twice the slowest of any later burst in every window,
// the baseline's too. In a window of a few seconds they were more than 1 % of the answers and set
// its p99 alone; they measure the start of the load, not the server under it.

import autocannon from 'autocannon';
import { percentile } from '../test/support/fault-drill.ts';

/** What a fixed-rate load saw. */
export interface Load {
  rate: number;
  seconds: number;
  served_rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Connection errors, timeouts and non-2xx answers. */
  errors: number;
}

/** Loads still running (stopped by a benchmark's clean-up). */
export const running = new Set<{ stop(): void }>();

const round1 = (x: number) => Math.round(x * 10) / 10;

/** p50, p99 and the slowest of answers' latencies, in whole milliseconds (as the figures were always
 *  given). */
export function latencyFigures(latencies: readonly number[]): { p50_ms: number; p99_ms: number; max_ms: number } {
  const xs = [...latencies];
  return { p50_ms: Math.round(percentile(xs, 50)), p99_ms: Math.round(percentile(xs, 99)), max_ms: Math.round(percentile(xs, 100)) };
}

/** `rate` recorded scores a second for `seconds` with `key` over `connections`; `until` ends the
 *  load early (then `seconds` is its length). */
export function fixedRate(o: {
  base: string;
  key: string;
  makeBody: () => string;
  rate: number;
  connections: number;
  seconds: number;
  until?: Promise<unknown> | undefined;
  /** Each answer's latency (ms) is pushed here: loads in several windows pooled into one figure. */
  latencies?: number[];
}): Promise<Load> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const instance = autocannon(
      {
        url: `${o.base}/api/v1/risk/score`,
        method: 'POST',
        connections: o.connections,
        overallRate: o.rate,
        duration: o.seconds,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${o.key}` },
        requests: [{ setupRequest: (req) => ({ ...req, body: o.makeBody() }) }],
      },
      (err, r) => {
        running.delete(instance);
        if (err) return reject(err);
        const elapsed = (performance.now() - t0) / 1000;
        resolve({
          rate: o.rate,
          seconds: round1(elapsed),
          served_rps: Math.round(r['2xx'] / elapsed),
          ...latencyFigures(latencies),
          errors: r.errors + r.timeouts + r.non2xx,
        });
      },
    );
    const latencies: number[] = [];
    const opened = new WeakSet<object>();
    instance.on('response', (client: object, _status: number, _bytes: number, ms: number) => {
      if (!opened.has(client)) return void opened.add(client);
      latencies.push(ms);
      o.latencies?.push(ms);
    });
    running.add(instance);
    void o.until?.finally(() => instance.stop());
  });
}
