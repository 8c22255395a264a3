// A request's deadline, as the database sees it: every statement sent on behalf of a request must
// settle before the request's deadline, or it is cancelled and the request fails with
// `database_unavailable` (503 with Retry-After), so a database that stops answering holds no
// request past its deadline. The deadline travels with the request's asynchronous context
// (AsyncLocalStorage), so no use case threads it through; http/ sets it per route.
//
// Work that is shared or outlives its request (loading an organization, the group commit, jobs, the
// live feed) runs `unbounded` or with a deadline of its own: a request's deadline must never cut the
// work other requests wait for. And a deadline ends with its request (`finish`): anything started
// from a request that runs on after it, on a timer or a promise, is no longer bound by it.

import { AsyncLocalStorage } from 'node:async_hooks';
import { StorageError } from './errors.ts';

/** A deadline: by a time (a request's whole life), or for each operation (an upload or an export,
 *  whose body may take minutes to arrive before its database work begins). */
export class Deadline {
  readonly seconds: number;

  readonly #at: number | undefined;
  #open = true;

  constructor(seconds: number, perOperation = false) {
    this.seconds = seconds;
    this.#at = perOperation ? undefined : performance.now() + seconds * 1000;
  }

  /** Runs `fn`, and everything it starts, under this deadline. */
  run<T>(fn: () => T): T {
    return current.run(this, fn);
  }

  /** The request has been answered: what it started and left running is bound no more. */
  finish(): void {
    this.#open = false;
  }

  /** Milliseconds left, or undefined once finished. */
  remaining(): number | undefined {
    if (!this.#open) return undefined;
    return this.#at === undefined ? this.seconds * 1000 : this.#at - performance.now();
  }
}

const current = new AsyncLocalStorage<Deadline | undefined>();

/** A deadline `seconds` from now, for `fn` and everything it starts. */
export function withDeadline<T>(seconds: number, fn: () => T): T {
  return new Deadline(seconds).run(fn);
}

/** Runs `fn` under no request's deadline (shared work some request happened to start). */
export function unbounded<T>(fn: () => T): T {
  return current.run(undefined, fn);
}

/** Milliseconds left before the current deadline, or undefined when none applies. */
export function remainingMs(): number | undefined {
  return current.getStore()?.remaining();
}

/** A database operation that did not settle before its request's deadline: `database_unavailable`
 *  to the client, and told apart by its class from a failure of the work itself, since a timer may
 *  fire a fraction of a millisecond before the clock says the deadline has passed. */
export class DeadlinePassed extends StorageError {}

/** The error of a database operation that did not settle before its deadline. */
export function deadlinePassed(what: string): DeadlinePassed {
  const seconds = current.getStore()?.seconds;
  return new DeadlinePassed('database_unavailable', `${what} did not answer within the request's deadline${seconds === undefined ? '' : ` (${seconds} s)`}`);
}

/**
 * Waits for `work` until the current deadline: past it, rejects with `database_unavailable` (the
 * work goes on; its outcome is not known to this caller). Without a deadline, waits as long as it takes.
 */
export function beforeDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  const left = remainingMs();
  if (left === undefined) return work;
  if (left <= 0) return Promise.reject(deadlinePassed(what));
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlinePassed(what)), left);
  });
  return Promise.race([work, passed]).finally(() => clearTimeout(timer));
}
