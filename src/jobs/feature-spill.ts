// A job's feature matrices on disk instead of in memory. Features are computed in time order (the
// replay) and scored in file order, so every row's features must wait somewhere between the two
// passes; kept in memory for the whole job, they would be the largest part of a job's peak.
// Here the replay writes each chunk of rows to a temporary file at their file positions, and
// scoring reads them back chunk by chunk in file order: memory holds one chunk whatever the file's
// size, and the operating system's page cache makes the round trip cheap.
//
// Layout: one block per channel, row-major, rows in file order; channel c's row i starts at
// `blockStart[c] + i * width[c]` doubles. Rows that are consecutive in the file and in a chunk are
// written with one call (a file already in time order is written a block per channel per chunk).

import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';

export class FeatureSpill {
  private readonly path: string;
  private readonly widths: readonly number[];

  private readonly fd: number;
  private readonly blockStart: number[];

  constructor(path: string, rows: number, widths: readonly number[]) {
    this.path = path;
    this.widths = widths;
    // A spill left by an attempt that died with its process (the job is taken up again from the
    // start) is garbage: it goes, and this attempt's file is made afresh.
    rmSync(path, { force: true });
    this.fd = openSync(path, 'wx+');
    let at = 0;
    this.blockStart = widths.map((w) => {
      const start = at;
      at += rows * w;
      return start;
    });
  }

  /** Writes a chunk: `matrices[c]` holds `positions.length` rows of channel c (chunk row r belongs
   *  at file row `positions[r]`). */
  write(matrices: readonly Float64Array[], positions: ArrayLike<number>, count: number): void {
    for (let r = 0; r < count; ) {
      // A run of rows that are also consecutive in the file.
      let end = r + 1;
      while (end < count && positions[end] === positions[end - 1]! + 1) end++;
      for (let c = 0; c < this.widths.length; c++) {
        const w = this.widths[c]!;
        const m = matrices[c]!;
        writeAll(this.fd, new Uint8Array(m.buffer, m.byteOffset + r * w * 8, (end - r) * w * 8), (this.blockStart[c]! + positions[r]! * w) * 8);
      }
      r = end;
    }
  }

  /** Reads file rows [start, start + count) of every channel into `matrices` (row 0 onwards). */
  read(start: number, count: number, matrices: readonly Float64Array[]): void {
    for (let c = 0; c < this.widths.length; c++) {
      const w = this.widths[c]!;
      const m = matrices[c]!;
      readAll(this.fd, new Uint8Array(m.buffer, m.byteOffset, count * w * 8), (this.blockStart[c]! + start * w) * 8);
    }
  }

  /** Closes and deletes the file. */
  remove(): void {
    try {
      closeSync(this.fd);
    } finally {
      rmSync(this.path, { force: true });
    }
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

function readAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length; ) {
    const n = readSync(fd, bytes, done, bytes.length - done, position + done);
    if (n === 0) throw new Error('feature file ended early');
    done += n;
  }
}
