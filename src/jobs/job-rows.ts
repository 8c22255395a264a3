// A job's rows, as the two passes of batch-score.ts read them: the replay in time order, then the
// writing in file order. A file in time order with rows kept at validation (columns.ts) is read
// from disk a chunk at a time on both passes, so the job holds no row beyond its chunk however long
// the file. Otherwise the rows are held as compact columns in memory (records.ts): read
// from the kept file when there is one, else parsed from the CSV; and put in time order.

import type { Transaction } from '../domain/transaction.ts';
import { RecordStore, type RowColumns } from '../domain/history/records.ts';
import { packedStart } from '../domain/history/strings.ts';
import { KeptColumns, type ColumnChunk } from '../datasets/columns.ts';
import { readRows, type ColumnMapping, type ParsedRow } from '../datasets/csv.ts';

/** Consecutive rows of the replay: file positions and, for each, its transaction (time final). */
export interface ReplayChunk {
  count: number;
  positions: ArrayLike<number>;
  at(r: number): Transaction;
}

export interface JobRows {
  readonly length: number;
  /** Customer and merchant ids by the index `columns` gives; complete once `replay` has run. */
  readonly entityNames: readonly string[];
  /** The rows in time order (the timestamp; rows without one one second apart after the first
   *  that has one, or from 0 when none has), stable for equal times, at most `size` at a time. */
  replay(size: number): Iterable<ReplayChunk>;
  /** Rows [from, to) in file order; called for consecutive ranges from 0, after the replay. */
  columns(from: number, to: number): RowColumns;
  close(): void;
}

/** The job's rows: streamed from the kept file when its rows are in time order, else in memory. */
export async function jobRows(path: string, mapping: ColumnMapping, expectedRows: number, progress: (fraction: number) => void): Promise<JobRows> {
  const kept = KeptColumns.open(path, mapping);
  if (kept?.timeOrdered) return new StreamedRows(kept);
  let store: RecordStore | undefined;
  if (kept) {
    try {
      store = new RecordStore(kept.rows);
      for (const c of kept.chunks()) for (let r = 0; r < c.count; r++) store.push(chunkRecord(kept, c, r, true));
    } catch {
      store = undefined; // damaged: parse the CSV instead
    } finally {
      kept.close();
    }
  }
  if (!store) {
    store = new RecordStore(expectedRows);
    for await (const row of readRows(path, mapping)) {
      store.push(toRecord(row));
      if (store.length % 10_000 === 0) progress(Math.min(1, store.length / Math.max(1, expectedRows)));
    }
  }
  return new HeldRows(store);
}

/** A parsed row as a record of the job's history (no timestamp: NaN, which the job replaces). */
export function toRecord(r: ParsedRow): Transaction {
  const tx: Transaction = {
    time: r.time ?? Number.NaN,
    amount: r.amount,
    customer_id: r.customer_id,
    merchant_id: r.merchant_id,
    location: r.location,
    payment_type: r.payment_type,
    transaction_id: r.transaction_id,
  };
  if (r.label !== undefined) tx.label = r.label;
  return tx;
}

/** Row r of a kept chunk as a transaction (its id only when asked for: the replay needs none). */
function chunkRecord(kept: KeptColumns, c: ColumnChunk, r: number, withId: boolean): Transaction {
  const tx: Transaction = {
    time: c.times[r]!,
    amount: c.amounts[r]!,
    customer_id: kept.entities[c.customers[r]!]!,
    merchant_id: kept.entities[c.merchants[r]!]!,
    location: kept.places[c.locations[r]!]!,
    payment_type: kept.places[c.paymentTypes[r]!]!,
  };
  const label = c.labels[r]!;
  if (label === 0 || label === 1) tx.label = label;
  if (withId) {
    const start = c.idOffsets[r]!;
    if (start >= 0) tx.transaction_id = c.idBytes.toString('utf8', start, packedStart(c.idOffsets[r + 1]!));
  }
  return tx;
}

/** Rows held as columns in memory. */
class HeldRows implements JobRows {
  private readonly store: RecordStore;

  private readonly order: Uint32Array;
  private readonly base: number | undefined;

  constructor(store: RecordStore) {
    this.store = store;
    const n = store.length;
    let base: number | undefined;
    for (let i = 0; i < n && base === undefined; i++) if (!Number.isNaN(store.time(i))) base = store.time(i);
    this.base = base;
    this.order = Uint32Array.from({ length: n }, (_, i) => i).sort((a, b) => this.timeOf(a) - this.timeOf(b) || a - b);
  }

  get length(): number {
    return this.store.length;
  }

  get entityNames(): readonly string[] {
    return this.store.entityNames;
  }

  private timeOf(i: number): number {
    const t = this.store.time(i);
    return Number.isNaN(t) ? (this.base ?? 0) + i * 1000 : t;
  }

  *replay(size: number): Iterable<ReplayChunk> {
    const n = this.length;
    for (let from = 0; from < n; from += size) {
      const positions = this.order.subarray(from, Math.min(n, from + size));
      yield {
        count: positions.length,
        positions,
        at: (r) => {
          const i = positions[r]!;
          const tx = this.store.at(i)!;
          tx.time = this.timeOf(i);
          return tx;
        },
      };
    }
  }

  columns(from: number, to: number): RowColumns {
    return this.store.columns(from, to);
  }

  close(): void {}
}

/** Rows read from the kept file a chunk at a time, in file order, which is their time order. */
class StreamedRows implements JobRows {
  private readonly kept: KeptColumns;

  private reading: Generator<ColumnChunk> | undefined;
  private current: ColumnChunk | undefined;
  private readonly out = {
    amounts: new Float64Array(0),
    labels: new Int8Array(0),
    customers: new Int32Array(0),
    merchants: new Int32Array(0),
    idOffsets: new Int32Array(1),
    idBytes: Buffer.alloc(0),
  };

  constructor(kept: KeptColumns) {
    this.kept = kept;
  }

  get length(): number {
    return this.kept.rows;
  }

  get entityNames(): readonly string[] {
    return this.kept.entities;
  }

  *replay(size: number): Iterable<ReplayChunk> {
    for (const c of this.kept.chunks()) {
      for (let from = 0; from < c.count; from += size) {
        const count = Math.min(size, c.count - from);
        yield {
          count,
          positions: Uint32Array.from({ length: count }, (_, r) => c.start + from + r),
          at: (r) => {
            const tx = chunkRecord(this.kept, c, from + r, false);
            // No row has a time (a file in time order either has them all or none).
            if (Number.isNaN(tx.time)) tx.time = (c.start + from + r) * 1000;
            return tx;
          },
        };
      }
    }
  }

  columns(from: number, to: number): RowColumns {
    const count = to - from;
    const o = this.out;
    if (o.amounts.length < count) {
      o.amounts = new Float64Array(count);
      o.labels = new Int8Array(count);
      o.customers = new Int32Array(count);
      o.merchants = new Int32Array(count);
      o.idOffsets = new Int32Array(count + 1);
    }
    let used = 0;
    for (let k = 0; k < count; k++) {
      const i = from + k;
      let c = this.current;
      while (!c || i >= c.start + c.count) {
        this.reading ??= this.kept.chunks();
        const next = this.reading.next();
        if (next.done) throw new Error('kept rows: fewer rows than the job asked for');
        c = this.current = next.value;
      }
      const r = i - c.start;
      o.amounts[k] = c.amounts[r]!;
      o.labels[k] = c.labels[r]!;
      o.customers[k] = c.customers[r]!;
      o.merchants[k] = c.merchants[r]!;
      const start = c.idOffsets[r]!;
      const end = packedStart(c.idOffsets[r + 1]!);
      if (start < 0) {
        o.idOffsets[k] = -1 - used;
        continue;
      }
      if (used + end - start > o.idBytes.length) {
        const wider = Buffer.allocUnsafe(Math.max(used + end - start, o.idBytes.length * 2, 1 << 16));
        o.idBytes.copy(wider, 0, 0, used);
        o.idBytes = wider;
      }
      o.idOffsets[k] = used;
      used += c.idBytes.copy(o.idBytes, used, start, end);
    }
    o.idOffsets[count] = used;
    return {
      amounts: o.amounts.subarray(0, count),
      labels: o.labels.subarray(0, count),
      customers: o.customers.subarray(0, count),
      merchants: o.merchants.subarray(0, count),
      idBytes: o.idBytes,
      idOffsets: o.idOffsets.subarray(0, count + 1),
    };
  }

  close(): void {
    this.reading?.return(undefined);
    this.kept.close();
  }
}
