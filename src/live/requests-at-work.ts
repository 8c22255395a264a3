// How many requests this process is working on right now, in memory the threads that load a large
// history can read (a SharedArrayBuffer): their reading thread holds back the database's rows while
// any request is being answered, so that a load's read (the database's COPY, which runs at the
// database's own priority, and the two threads' decoding and building) takes the time between
// requests rather than the requests' own. A request waiting for a history's load is not at work
// (it would otherwise hold back the very load it waits for); the HTTP layer counts the rest, from
// the request's arrival to its answer's end.
// A hold is bounded (`holdWhileAtWork`), so a process that is never idle still loads, more slowly.

/** The count (index 0), the requests among it that wait for a load (1), and the threads holding on
 *  it now (2: a request's end wakes them only then, and costs nothing more otherwise). */
const AT = 0;
const PARKED = 1;
const HOLDING = 2;

export class RequestsAtWork {
  readonly buffer = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  private readonly counts = new Int32Array(this.buffer);

  /** A request arrived. */
  enter(): void {
    Atomics.add(this.counts, AT, 1);
  }

  /** A request's answer ended (sent, or its connection closed). */
  leave(): void {
    Atomics.sub(this.counts, AT, 1);
    if (Atomics.load(this.counts, HOLDING) > 0) Atomics.notify(this.counts, AT);
  }

  /** Runs `wait` (a request waiting for a history's load) without counting its request as at work. */
  async parked<T>(wait: Promise<T>): Promise<T> {
    Atomics.add(this.counts, PARKED, 1);
    if (Atomics.load(this.counts, HOLDING) > 0) Atomics.notify(this.counts, AT);
    try {
      return await wait;
    } finally {
      Atomics.sub(this.counts, PARKED, 1);
    }
  }

  /** Requests at work now, not counting those waiting for a load. */
  get now(): number {
    return atWork(this.counts);
  }
}

function atWork(counts: Int32Array): number {
  return Atomics.load(counts, AT) - Atomics.load(counts, PARKED);
}

/** This process's requests (the main thread's: the only one answering them). */
export const requestsAtWork = new RequestsAtWork();

/**
 * On a loading thread: blocks it while any request is at work in the process whose counts `buffer`
 * holds, for at most `maxMs`; returns how long it held (ms). A thread blocked in the middle of a
 * COPY stops reading its connection, so the database's side of the COPY waits too.
 */
export function holdWhileAtWork(buffer: SharedArrayBuffer, maxMs: number): number {
  const counts = new Int32Array(buffer);
  if (atWork(counts) <= 0) return 0;
  const from = performance.now();
  const until = from + maxMs;
  Atomics.add(counts, HOLDING, 1);
  try {
    for (;;) {
      const now = performance.now();
      if (atWork(counts) <= 0 || now >= until) return now - from;
      // Woken when a request leaves or parks, or at once when the count changed since it was read
      // (registered as holding first, so no request's end is missed; a park in between is seen at
      // the bound at the latest).
      Atomics.wait(counts, AT, Atomics.load(counts, AT), until - now);
    }
  } finally {
    Atomics.sub(counts, HOLDING, 1);
  }
}
