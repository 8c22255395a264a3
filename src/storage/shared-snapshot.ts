// A database snapshot shared with a connection of another thread (PostgreSQL's exported
// snapshots): a transaction exports its snapshot (`TransactionQueryable.shareSnapshot`), and a
// thread that was handed it opens a connection of its own and reads, in a transaction started on
// that snapshot, exactly what the exporting transaction sees. A large history's rows are read this
// way on the thread that builds it (src/live/history-thread-worker.ts), so the event loop that
// answers requests never decodes them. The exporting transaction stays open until the reader is
// done (PostgreSQL drops an exported snapshot when its transaction ends).

import postgres from 'postgres';
import { readCopy, sqlLiteral } from './copy-binary.ts';
import type { SharedSnapshot } from './db.ts';
import { messageOf, redactor } from './errors.ts';

/** Runs `fn` on a connection of its own in a read-only transaction started on `shared`; `copyOut`
 *  reads a query's rows in binary COPY format (see db.ts). The connection is closed after. */
export async function inSharedSnapshot<T>(shared: SharedSnapshot, fn: (copyOut: (select: string) => AsyncIterable<Uint8Array>) => Promise<T>): Promise<T> {
  const redact = redactor([shared.url]);
  const sql = postgres(shared.url, {
    max: 1,
    fetch_types: false,
    onnotice: () => {},
    connection: { statement_timeout: shared.statementTimeoutMs },
  });
  try {
    return (await sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
      // Only as the transaction's first statement (PostgreSQL's rule).
      await tx.unsafe(`SET TRANSACTION SNAPSHOT ${sqlLiteral(shared.id)}`);
      return fn((select) => copied(tx, select));
    })) as T;
  } catch (err) {
    throw new Error(`reading in a shared database snapshot failed: ${redact(messageOf(err))}`);
  } finally {
    await sql.end({ timeout: 5 }).catch(() => {});
  }
}

async function* copied(tx: postgres.TransactionSql, select: string): AsyncGenerator<Uint8Array> {
  yield* readCopy(await tx.unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`).readable());
}
