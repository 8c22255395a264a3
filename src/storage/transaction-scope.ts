// Knows whether the current async call chain is inside a transaction of a given Db, so that a call
// to the Db itself (instead of the `tx` handle) from inside its own transaction fails at once with a
// clear error. Without this, PGlite (one connection, queries queued) would wait forever for the
// transaction to end, and PostgreSQL would silently run the call outside the transaction.

import { AsyncLocalStorage } from 'node:async_hooks';
import { StorageError } from './errors.ts';

interface Scope {
  readonly owner: object;
  /** Cleared when the transaction ends: work started inside it may legitimately run later. */
  open: boolean;
  readonly parent: Scope | undefined;
}

const current = new AsyncLocalStorage<Scope>();

/** Runs fn marked as inside a transaction of `owner`. */
export async function insideTransaction<R>(owner: object, fn: () => Promise<R>): Promise<R> {
  const scope: Scope = { owner, open: true, parent: current.getStore() };
  try {
    return await current.run(scope, fn);
  } finally {
    scope.open = false;
  }
}

/** Throws when called from inside an open transaction of `owner`. */
export function assertOutsideTransaction(owner: object, what: string): void {
  for (let s = current.getStore(); s; s = s.parent) {
    if (s.owner === owner && s.open) {
      throw new StorageError(
        'query_failed',
        `${what} was called on the database from inside one of its own transactions: use the transaction handle passed to the callback`,
      );
    }
  }
}
