// A webhook receiver on loopback for the tests: records every request (headers and the body as it
// arrived) and answers as the test says, one behaviour per request in turn (a status, a delay, a
// redirect), then 200.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = { status: number; delayMs?: number; location?: string; body?: string };

export class Receiver {
  readonly received: Received[] = [];
  /** Answers for the next requests, in order; once empty, 200. */
  answers: Answer[] = [];
  private server: Server | undefined;
  private waiters: { n: number; resolve: () => void }[] = [];
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = this.answers.shift() ?? { status: 200 };
        const reply = () => {
          if (res.destroyed) return;
          this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
          res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
          res.end(answer.body ?? 'ok');
          this.waiters = this.waiters.filter((w) => {
            if (this.received.length < w.n) return true;
            w.resolve();
            return false;
          });
        };
        if (answer.delayMs) setTimeout(reply, answer.delayMs);
        else reply();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Resolves once `n` requests have been answered (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs = 20_000): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver: ${this.received.length} of ${n} requests after ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** The JSON bodies received, in order. */
  events(): { id: string; type: string; created_at: string; organization_id: string; data: Record<string, unknown> }[] {
    return this.received.map((r) => JSON.parse(r.body));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}
