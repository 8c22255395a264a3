// A table locked by another session (ACCESS EXCLUSIVE, in a transaction of its own) until the test
// releases it: what holds a server's statements on that table back, deterministically, where a
// timing could not.

import type postgres from 'postgres';

export interface HeldLock {
  /** Ends the locking transaction; resolves once it has. Safe to call more than once. */
  release(): Promise<void>;
}

/** Locks `table` through `sql` (a connection of the test's own); resolves once the lock is held. */
export async function holdLock(sql: postgres.Sql, table: string): Promise<HeldLock> {
  let locked!: () => void;
  let release!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = sql.begin(async (tx) => {
    await tx.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    locked();
    await released;
  });
  await Promise.race([isLocked, held]);
  return {
    async release() {
      release();
      await held.catch(() => {});
    },
  };
}
