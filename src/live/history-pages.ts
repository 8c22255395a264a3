// Pages of a history's rows handed from one thread to another (history-thread.ts): each page's
// arrays travel by transfer, not copy, and a sender never gets more than a few pages ahead of the
// thread taking them, so a read faster than the build never holds the whole history's rows at once.
// The taker sends each page's buffers back with its `took`: a thread that allocates little runs its
// collector seldom, and buffers left with it would pile up (external memory) until it did.

import { isMarkedAsUntransferable } from 'node:worker_threads';

/** Pages handed over and not yet taken, at most. */
export const PAGES_AHEAD = 4;

/** A page as it can be transferred: an array that is its buffer's whole (as a read's pages' are)
 *  goes as it is, any other is copied into a buffer of its own (a transfer takes a buffer whole). */
export function portable<T extends object>(page: T): { page: T; transfer: ArrayBuffer[] } {
  const transfer = new Set<ArrayBuffer>();
  const copy = (v: unknown): unknown => {
    if (ArrayBuffer.isView(v)) {
      const b = v.buffer;
      const whole = b instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === b.byteLength && !transfer.has(b) && !isMarkedAsUntransferable(b);
      // A copy of the bytes (a Buffer's own slice() would share them); it arrives as the same kind of
      // array (a Buffer as a Uint8Array, which is all a history reads of one).
      let own = v;
      if (!whole) {
        const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice().buffer;
        own = Buffer.isBuffer(v) ? Buffer.from(bytes) : new (v.constructor as Uint8ArrayConstructor)(bytes);
      }
      transfer.add(own.buffer as ArrayBuffer);
      return own;
    }
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]));
    return v;
  };
  return { page: copy(page) as T, transfer: [...transfer] };
}

/** A page's buffers, once the taker has copied what it keeps of them (to send back). */
export function buffersOf(page: object): ArrayBuffer[] {
  const found = new Set<ArrayBuffer>();
  const walk = (v: unknown): void => {
    if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof ArrayBuffer && !isMarkedAsUntransferable(v.buffer)) found.add(v.buffer);
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const x of Object.values(v)) walk(x);
  };
  walk(page);
  return [...found];
}

/** The sending side: `send` posts a page and resolves once fewer than PAGES_AHEAD are untaken;
 *  `took` is called for each page taken; `stop` wakes a waiting sender with the reason. */
export class PagesAhead {
  private readonly post: (page: object, transfer: ArrayBuffer[]) => void;
  private ahead = 0;
  private room: (() => void) | undefined;
  private stopped: Error | undefined;

  constructor(post: (page: object, transfer: ArrayBuffer[]) => void) {
    this.post = post;
  }

  async send(message: object, transfer: ArrayBuffer[]): Promise<void> {
    if (this.stopped) throw this.stopped;
    this.post(message, transfer);
    this.ahead++;
    while (this.ahead >= PAGES_AHEAD && !this.stopped) await new Promise<void>((r) => (this.room = r));
    if (this.stopped) throw this.stopped;
  }

  /** Sends a page of columns as `kind`, its arrays transferred (`portable`). */
  page(kind: 'uses' | 'transactions', page: object): Promise<void> {
    const p = portable(page);
    return this.send({ kind, page: p.page }, p.transfer);
  }

  took(): void {
    this.ahead--;
    const wake = this.room;
    this.room = undefined;
    wake?.();
  }

  stop(reason: Error): void {
    this.stopped ??= reason;
    const wake = this.room;
    this.room = undefined;
    wake?.();
  }
}
