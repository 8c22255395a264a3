// A history's snapshot pieces put aside until they are stored. Storing a snapshot is paced
// (history-snapshots.ts: PostgreSQL's log must keep room for the commits of scores), so it takes
// seconds to tens of seconds; the history it describes changes as soon as its tenant is ready.
// On PostgreSQL the pieces are written to a file first: a fraction of a second before the tenant is
// ready, and no second copy of the history in memory for all that time. The file is removed from
// its directory as soon as it is open, so nothing is left behind by a process that stops, however
// it stops. The embedded database's write holds its only connection, which every other
// organization's commit waits for: there the pieces are copied in memory (a piece per turn of the
// event loop), so that nothing but the INSERTs happens inside that transaction.

import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import type { Db } from './db.ts';

/** Pieces put aside: how many, their bytes in all, and each piece read back in order (once). */
export interface SnapshotPieces {
  count: number;
  bytes: number;
  pieces(): AsyncIterable<Uint8Array>;
  /** Gives their room back (after the pieces were read, or instead of reading them). */
  close(): Promise<void>;
}

/** Puts `pieces` aside as `db` stores them best (above); they are views, which must not change
 *  until this resolves. `dir`: where files go. */
export function putAside(db: Pick<Db, 'kind'>, dir: string, pieces: readonly Uint8Array[]): Promise<SnapshotPieces> {
  return db.kind === 'postgres' ? spillPieces(dir, pieces) : copiedPieces(pieces);
}

async function copiedPieces(pieces: readonly Uint8Array[]): Promise<SnapshotPieces> {
  let copies: Uint8Array[] = [];
  for (const p of pieces) {
    copies.push(Uint8Array.prototype.slice.call(p));
    await turn();
  }
  return {
    count: copies.length,
    bytes: copies.reduce((a, p) => a + p.length, 0),
    async *pieces() {
      yield* copies;
    },
    async close() {
      copies = [];
    },
  };
}

/** Writes `pieces` to a new file in `dir`. */
export async function spillPieces(dir: string, pieces: readonly Uint8Array[]): Promise<SnapshotPieces> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `snapshot-${process.pid}-${randomBytes(6).toString('hex')}.pieces`);
  const file: FileHandle = await open(path, 'w+', 0o600);
  const lengths: number[] = [];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await file.close();
  };
  try {
    await rm(path);
    let at = 0;
    for (const p of pieces) {
      for (let done = 0; done < p.length; ) done += (await file.write(p, done, p.length - done, at + done)).bytesWritten;
      lengths.push(p.length);
      at += p.length;
    }
  } catch (e) {
    await close().catch(() => {});
    throw e;
  }
  return {
    count: lengths.length,
    bytes: lengths.reduce((a, n) => a + n, 0),
    async *pieces() {
      let at = 0;
      for (const length of lengths) {
        const piece = Buffer.allocUnsafe(length);
        for (let done = 0; done < length; ) {
          const { bytesRead } = await file.read(piece, done, length - done, at + done);
          if (bytesRead === 0) throw new Error('a snapshot put aside on disk ends early');
          done += bytesRead;
        }
        at += length;
        yield piece;
      }
    },
    close,
  };
}
