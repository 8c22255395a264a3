// A history's snapshot pieces put aside on disk until they are stored. Storing a snapshot is paced
// (history-snapshots.ts: PostgreSQL's log must keep room for the commits of scores), so it takes
// seconds to tens of seconds; the history it describes changes as soon as its tenant is ready. Held
// in memory, the pieces would be a second copy of the whole history for all that time; written to a
// file first, they cost the process a fraction of a second before the tenant is ready and no memory
// after. The file is removed from its directory as soon as it is open: nothing is left behind by a
// process that stops, however it stops.

import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Pieces put aside: how many, their bytes in all, and each piece read back in order (once). */
export interface SpilledPieces {
  count: number;
  bytes: number;
  pieces(): AsyncIterable<Uint8Array>;
  /** Gives the file's space back (after the pieces were read, or instead of reading them). */
  close(): Promise<void>;
}

/** Writes `pieces` (views, which must not change until this resolves) to a new file in `dir`. */
export async function spillPieces(dir: string, pieces: readonly Uint8Array[]): Promise<SpilledPieces> {
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
