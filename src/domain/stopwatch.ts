// Where a request's server time went, in one mechanism from the route to the engine: a stopwatch
// whose every lap closes the phase that ran since the previous one. The scorer's laps are a score
// answer's `stages`; the recording use case's and the route's make the Server-Timing header.

/** One phase and its milliseconds, to the microsecond. */
export interface Lap {
  name: string;
  ms: number;
}

const micro = (ms: number) => Math.round(ms * 1000) / 1000;

export class Stopwatch {
  readonly started: number;

  readonly laps: Lap[] = [];
  #mark: number;

  /** Started at `started` (performance.now()'s clock), by default now. */
  constructor(started: number = performance.now()) {
    this.started = started;
    this.#mark = started;
  }

  /** Closes the phase since the previous lap (or the start) under `name`, at `at` (now by default). */
  lap(name: string, at: number = performance.now()): void {
    this.laps.push({ name, ms: micro(at - this.#mark) });
    this.#mark = at;
  }

  /** Milliseconds from the start to `at` (now by default), to the microsecond. */
  elapsed(at: number = performance.now()): number {
    return micro(at - this.started);
  }
}
