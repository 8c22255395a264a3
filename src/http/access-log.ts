// The request log, at a cost that stays small at full load and still tells an operator what
// happened. Fastify's own request logging writes two JSON lines per request, a large share of a
// scoring server's work at full load; here:
// - every response of status 400 or more gets its own line (4xx at info, 5xx at error), with the
//   method, the route, the path (no query string: it may carry what should not be logged; the
//   route again where the path names a customer), the
//   status, the error's reason when it has one, the milliseconds and the request id;
// - successful responses are summed per route and status over SUMMARY_MS and written as one line
//   per route and status: how many, and their p50, p99 and longest milliseconds;
// - at `debug`, every request gets its own line as well.
// Headers are never logged (API keys, cookies and CSRF tokens travel there).

import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Route parameters that may name a person: a customer, an entity, a key field's value. */
const NAMES_SOMEONE = /:(customer_id|entity_id|value)\b/;

/** How often successful requests are summarised. */
export const SUMMARY_MS = 10_000;

declare module 'fastify' {
  interface FastifyReply {
    /** The reason code of an error answer (http/errors.ts), for its log line. */
    errorReason?: string;
  }
}

interface Window {
  method: string;
  route: string;
  status: number;
  ms: number[];
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

export class AccessLog {
  private readonly log: FastifyBaseLogger;

  private readonly windows = new Map<string, Window>();
  private readonly timer: NodeJS.Timeout;
  private since = Date.now();

  constructor(log: FastifyBaseLogger) {
    this.log = log;
    this.timer = setInterval(() => this.summarise(), SUMMARY_MS);
    this.timer.unref();
  }

  /** The onResponse hook's work for one request. */
  record(request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    const route = request.routeOptions.url ?? '(no route)';
    if (status >= 400 || this.log.level === 'debug' || this.log.level === 'trace') {
      const q = request.url.indexOf('?');
      const line = {
        request_id: request.id,
        method: request.method,
        route,
        // A path naming a customer or an entity (a customer's export or erasure, an entity's or a
        // key value's page) is logged as its route: the log never holds who a payment was from,
        // which an erasure could not reach.
        path: NAMES_SOMEONE.test(route) ? route : q < 0 ? request.url : request.url.slice(0, q),
        status,
        ms: round(ms),
        ...(reply.errorReason ? { reason: reply.errorReason } : {}),
      };
      if (status >= 500) this.log.error(line, 'request failed');
      else if (status >= 400) this.log.info(line, 'request refused');
      else this.log.debug(line, 'request');
    }
    if (status >= 400) return;
    const key = `${request.method} ${route} ${status}`;
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = { method: request.method, route, status, ms: [] }));
    w.ms.push(ms);
  }

  /** Writes the window's summary lines and starts a new window. */
  summarise(): void {
    const now = Date.now();
    const seconds = Math.round((now - this.since) / 100) / 10;
    this.since = now;
    for (const w of this.windows.values()) {
      const sorted = w.ms.sort((a, b) => a - b);
      this.log.info(
        {
          method: w.method,
          route: w.route,
          status: w.status,
          requests: sorted.length,
          seconds,
          p50_ms: round(percentile(sorted, 0.5)),
          p99_ms: round(percentile(sorted, 0.99)),
          max_ms: round(sorted[sorted.length - 1]!),
        },
        'requests',
      );
    }
    this.windows.clear();
  }

  /** Writes what the current window holds and stops. */
  close(): void {
    clearInterval(this.timer);
    this.summarise();
  }
}

/** Installs the request log on the app (its own logger; nothing when logging is off). */
export function installAccessLog(app: FastifyInstance): void {
  const log = new AccessLog(app.log);
  app.addHook('onResponse', (request, reply, done) => {
    log.record(request, reply);
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    log.close();
    done();
  });
}
