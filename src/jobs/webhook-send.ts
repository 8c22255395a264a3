// One webhook attempt over HTTP: a POST of the event as Standard Webhooks describes it
// (`webhook-id`, `webhook-timestamp`, `webhook-signature` holding one `v1,` signature per secret
// that signs now, so a receiver holding either secret during a rotation verifies it), with one
// deadline for the whole exchange, no redirect followed (a 3xx is a failure: the endpoint's URL is
// where the customer said, nowhere else), the address checked inside the connection
// (webhook-address.ts), and at most a small part of the answer read, kept only as a printable
// excerpt so that what a receiver says is never shown raw. Connections are kept alive; a request
// cut by the receiver closing one just then, before any answer, goes again on a new connection.

import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import { addressAllowed, checkedLookup, type AddressPolicy } from './webhook-address.ts';
import type { AttemptResult } from '../storage/webhook-queue.ts';

/** Most bytes of a receiver's answer read; the rest is dropped with the connection. */
const READ_LIMIT = 4096;
/** Characters of the answer kept for the deliveries log. */
const EXCERPT_CHARS = 256;
/** How a request fails on a kept-alive connection its server had closed. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export interface SignedEvent {
  id: string;
  /** The JSON body, exactly as signed. */
  body: string;
}

/** The event's body as it is sent: `{ id, type, created_at, organization_id, data }`. */
export function eventBody(e: { id: string; type: string; created_at: Date; organization_id: string; payload: unknown }): string {
  return JSON.stringify({ id: e.id, type: e.type, created_at: e.created_at.toISOString(), organization_id: e.organization_id, data: e.payload });
}

/** The `webhook-signature` header: a `v1,<base64>` signature per secret, space separated. */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' ');
}

export class WebhookSender {
  private readonly policy: AddressPolicy;
  private readonly timeoutMs: number;
  private readonly userAgent: string;

  private readonly agents = { http: new http.Agent({ keepAlive: true, maxSockets: 4 }), https: new https.Agent({ keepAlive: true, maxSockets: 4 }) };

  constructor(policy: AddressPolicy, timeoutMs: number, userAgent: string) {
    this.policy = policy;
    this.timeoutMs = timeoutMs;
    this.userAgent = userAgent;
  }

  /** Sends once; never throws: every failure is an AttemptResult with its reason code. */
  async send(url: string, event: SignedEvent, secrets: readonly string[]): Promise<AttemptResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const done = (r: Omit<AttemptResult, 'startedAt' | 'durationMs'>): AttemptResult => ({
      startedAt,
      durationMs: Math.round((performance.now() - t0) * 10) / 10,
      ...r,
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done({ statusCode: null, error: 'invalid_url', responseExcerpt: null });
    }
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(literal) && !addressAllowed(literal, this.policy)) return done({ statusCode: null, error: 'address_refused', responseExcerpt: null });
    const timestamp = new Date(Math.floor(startedAt.getTime() / 1000) * 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': this.userAgent,
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp.getTime() / 1000),
      'webhook-signature': signatureHeader(secrets, event.id, timestamp, event.body),
      'content-length': String(Buffer.byteLength(event.body)),
    };
    const secure = target.protocol === 'https:';
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      let current: http.ClientRequest | undefined;
      const finish = (r: Omit<AttemptResult, 'startedAt' | 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const timer = setTimeout(() => {
        finish({ statusCode: null, error: 'timeout', responseExcerpt: null });
        current?.destroy();
      }, this.timeoutMs);
      const post = (pooled: boolean) => {
        const agent = pooled ? (secure ? this.agents.https : this.agents.http) : false;
        let answered = false;
        const req = (secure ? https : http).request(target, { method: 'POST', headers, agent, lookup: checkedLookup(this.policy) as never }, (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          let read = 0;
          const status = res.statusCode ?? 0;
          const settle = () => {
            const excerpt = printable(Buffer.concat(chunks).subarray(0, READ_LIMIT).toString('utf8'));
            if (status >= 200 && status < 300) finish({ statusCode: status, error: null, responseExcerpt: excerpt });
            else finish({ statusCode: status, error: status >= 300 && status < 400 ? 'redirect' : 'http_status', responseExcerpt: excerpt });
          };
          res.on('data', (c: Buffer) => {
            if (read >= READ_LIMIT) return;
            chunks.push(c);
            read += c.length;
            if (read >= READ_LIMIT) {
              settle();
              res.destroy();
            }
          });
          res.on('end', settle);
          res.on('error', settle);
        });
        current = req;
        req.on('error', (e: NodeJS.ErrnoException) => {
          // A kept-alive connection the receiver closed as this request went out on it (a server's
          // or a load balancer's idle timeout): nothing was answered, so it is sent again at once
          // on a new connection, within the same deadline, as Node's documentation advises.
          if (req.reusedSocket && !answered && !settled && STALE_CONNECTION.has(e.code ?? '')) return post(false);
          finish({
            statusCode: null,
            error: e.code === 'EWEBHOOKADDRESS' ? 'address_refused' : e.code === 'ENOTFOUND' ? 'dns_failed' : 'connection_failed',
            responseExcerpt: null,
          });
        });
        req.end(event.body);
      };
      post(true);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** The answer as text a page can show: control characters replaced, cut to EXCERPT_CHARS. */
function printable(text: string): string | null {
  if (text.length === 0) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/g, '�');
  return clean.length > EXCERPT_CHARS ? `${clean.slice(0, EXCERPT_CHARS)}…` : clean;
}
