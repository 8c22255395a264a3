// Recorded scores at a fixed rate (autocannon's overall rate), for the benchmarks that ask how one
// thing (a history's load, an import) affects the requests of another organization: the latency
// at a rate the server sustains, not the most it can serve. autocannon sends each connection's
// share of a second as fast as answers come at the start of the second: the rate arrives in bursts,
// and a p99 is mostly how long a burst takes to drain (bench/README.md).

import autocannon from 'autocannon';

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
          p50_ms: r.latency.p50,
          p99_ms: r.latency.p99,
          max_ms: r.latency.max,
          errors: r.errors + r.timeouts + r.non2xx,
        });
      },
    );
    if (o.latencies) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => o.latencies!.push(ms));
    running.add(instance);
    void o.until?.finally(() => instance.stop());
  });
}
