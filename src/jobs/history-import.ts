// A history import: a job (kind `history_import`) that stores labelled rows into one organization's
// history, so that its velocity and graph features have context from its first scored transaction.
// The rows come from a validated upload with a timestamp column, or (a test organization) the
// built-in example, shifted in time so that its newest transaction is the moment the import began.
// It runs on the event loop, not in a worker thread, since the work is the database's: a chunk per
// statement, the loop yielded between chunks, real progress reported twice a second. An upload is read
// twice, a first pass checking every row so that a bad file fails the job with nothing stored. It
// can run again after a crash: ids already stored are skipped, the example's shift is taken from
// the job's first start, and the summary counts what this job's id stored, whichever attempt ends.
// The organization's own fields the upload's mapping maps are read from the file's cells as their
// declared types (datasets/mapped-fields.ts) and stored with each row, as a scored payment's are;
// a cell that cannot be its field's value fails the job in the checking pass, naming the row and
// the column, never the value. An upload that maps none is read exactly as before: no cells.

import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import type { HistoryImportSummary } from '../contract/jobs.ts';
import { readRows, readRowsWithCells, type ColumnMapping, type ParsedRow } from '../datasets/csv.ts';
import { CellRefused, fieldReader, type MappedField, type RowFields } from '../datasets/mapped-fields.ts';
import type { Db } from '../storage/db.ts';
import type { NewTransaction } from '../storage/live-rows.ts';
import { organizationData } from '../storage/organization-data.ts';
import { isoTime, isoTimeOrNull } from '../domain/iso-time.ts';

/** Where an import's rows come from (the job's `params`). */
export const ImportParams = z.discriminatedUnion('source', [
  z.object({ source: z.literal('dataset'), dataset_id: z.string() }),
  z.object({ source: z.literal('example') }),
]);
export type ImportParams = z.infer<typeof ImportParams>;

/** Rows per chunk: one INSERT statement each, by back end. On the embedded database a statement
 *  holds its only connection, so a chunk is what a score may wait for: 500 rows took 65–140 ms
 *  there, 100 take a fifth of that. */
export const IMPORT_CHUNK_ROWS = { postgres: 500, pglite: 100 } as const;
/** Progress is reported (a statement of its own) at most this often, and at the end. */
const PROGRESS_MS = 500;

/** A failure whose message is for the person who queued the import (the job's `error`). */
export class ImportRefused extends Error {}

/** The job was handed to another worker or the runner is stopping: stop without failing it. */
export class ImportStopped extends Error {}

/** The example's rows by index (the sandbox's records fit this, so nothing is simulated again). */
export interface ExampleRecords {
  readonly length: number;
  time(k: number): number;
  amount(k: number): number;
  customerId(k: number): string;
  merchantId(k: number): string;
  location(k: number): string;
  paymentType(k: number): string;
  transactionId(k: number): string | undefined;
  label(k: number): 0 | 1 | undefined;
}

/** Rows to import: how many, a check before anything is stored, and the rows in chunks. */
export interface ImportSource {
  total(): number;
  check(): Promise<void>;
  chunks(size: number): AsyncIterable<NewTransaction[]>;
}

interface Stamp {
  jobId: string;
  labelDelay: number;
}

/** The row as the history stores it: an import's source, job and label known a label delay on. */
function imported(
  r: Omit<NewTransaction, 'source' | 'import_job_id' | 'label' | 'label_known_ms' | 'outcome_source' | 'outcome_reported_by'>,
  label: 0 | 1 | undefined,
  s: Stamp,
): NewTransaction {
  const row: NewTransaction = { ...r, source: 'import', import_job_id: s.jobId };
  if (label === 0 || label === 1) {
    row.label = label;
    row.label_known_ms = r.time + s.labelDelay;
    row.outcome_source = 'import';
    row.outcome_reported_by = `import:${s.jobId}`;
  }
  return row;
}

/** The example, its newest transaction moved to `at` (every row by the same amount), its ids kept. */
export function exampleSource(records: ExampleRecords, at: number, stamp: Stamp): ImportSource {
  const n = records.length;
  const shift = n === 0 ? 0 : at - records.time(n - 1);
  return {
    total: () => n,
    check: async () => {},
    async *chunks(size) {
      for (let from = 0; from < n; from += size) {
        const chunk: NewTransaction[] = [];
        for (let k = from; k < Math.min(n, from + size); k++) {
          const time = records.time(k) + shift;
          chunk.push(
            imported(
              {
                transaction_id: records.transactionId(k) ?? `imp_${stamp.jobId}_${k + 1}`,
                time,
                amount: records.amount(k),
                customer_id: records.customerId(k),
                merchant_id: records.merchantId(k),
                location: records.location(k),
                payment_type: records.paymentType(k),
              },
              records.label(k),
              stamp,
            ),
          );
        }
        yield chunk;
      }
    },
  };
}

/**
 * An upload's rows as csv.ts parses them for scoring (the dataset's mapping, `unknown` for a
 * missing location or payment type). A file without a transaction_id column gives every row
 * `imp_<job id>_<row number>`; in a file with one, the parser reads an empty cell as the row's
 * number, as scoring does. `check` refuses a row without a time or with one after `at`, and a cell
 * of a mapped field (`fields`: the mapping's, as the organization declares them) that cannot be
 * its value.
 */
export function datasetSource(
  path: string,
  mapping: ColumnMapping,
  hasIds: boolean,
  at: number,
  stamp: Stamp,
  fields: readonly MappedField[] = [],
): ImportSource {
  let rows = -1;
  const idOf = (r: ParsedRow) => (hasIds ? r.transaction_id : `imp_${stamp.jobId}_${r.row}`);
  const read = fields.length ? fieldReader(fields) : undefined;
  const checkTime = (r: ParsedRow) => {
    if (r.time === undefined) {
      throw new ImportRefused(
        `row ${r.row} (transaction ${idOf(r)}) has no timestamp, so it cannot be placed in the organization's timeline; nothing was imported. Fill in every row's time (or remove the row), upload the file again and import that.`,
      );
    }
    if (r.time > at) {
      throw new ImportRefused(
        `row ${r.row} (transaction ${idOf(r)}) is at ${isoTime(r.time)}, after the import began (${isoTime(at)}): a history holds only what has happened; nothing was imported. Correct or remove the rows dated in the future, upload the file again and import that.`,
      );
    }
  };
  const row = (r: ParsedRow, f?: RowFields): NewTransaction => {
    const t = imported(
      {
        transaction_id: idOf(r),
        time: r.time!,
        amount: r.amount,
        customer_id: r.customer_id,
        merchant_id: r.merchant_id,
        location: r.location,
        payment_type: r.payment_type,
      },
      r.label,
      stamp,
    );
    if (f?.fields) {
      t.fields = f.fields;
      if (f.field_keys) t.field_keys = f.field_keys;
    }
    return t;
  };
  return {
    total: () => {
      if (rows < 0) throw new Error('check() first');
      return rows;
    },
    async check() {
      let n = 0;
      try {
        if (read)
          for await (const { row: r, cells } of readRowsWithCells(path, mapping)) {
            n++;
            checkTime(r);
            read(cells, r.row);
          }
        else
          for await (const r of readRows(path, mapping)) {
            n++;
            checkTime(r);
          }
      } catch (e) {
        if (e instanceof CellRefused) throw new ImportRefused(e.describe('nothing was imported', 'import that'));
        throw e;
      }
      rows = n;
    },
    async *chunks(size) {
      let chunk: NewTransaction[] = [];
      // Two loops rather than one generator over either: an upload without mapped fields reads no
      // cell of theirs and pays nothing for them. (Every cell checked out in `check`.)
      if (read)
        for await (const { row: r, cells } of readRowsWithCells(path, mapping)) {
          chunk.push(row(r, read(cells, r.row)));
          if (chunk.length === size) {
            yield chunk;
            chunk = [];
          }
        }
      else
        for await (const r of readRows(path, mapping)) {
          chunk.push(row(r));
          if (chunk.length === size) {
            yield chunk;
            chunk = [];
          }
        }
      if (chunk.length > 0) yield chunk;
    },
  };
}

export interface ImportRun {
  db: Db;
  organizationId: string;
  jobId: string;
  source: ImportSource;
  /** Reports progress (0–1) and beats the heart; false when the job is no longer this worker's. */
  progress(stage: string, fraction: number): Promise<boolean>;
  /** True once the runner is stopping. */
  stopped(): boolean;
  /** Called once rows may have been stored (also when the import then fails part way). */
  onStored(): void;
}

/** What a job stored: rows, of them labelled and fraud, and their time range (ms). */
type Tally = { imported: number; labelled: number; fraud: number; first: number | null; last: number | null };

function count(t: Tally, r: NewTransaction): void {
  t.imported++;
  if (r.label === 0 || r.label === 1) {
    t.labelled++;
    t.fraud += r.label;
  }
  t.first = t.first === null ? r.time : Math.min(t.first, r.time);
  t.last = t.last === null ? r.time : Math.max(t.last, r.time);
}

/** Checks the source, stores it chunk by chunk, and counts what this job stored. */
export async function runHistoryImport(o: ImportRun): Promise<HistoryImportSummary> {
  await o.progress('checking', 0);
  await o.source.check();
  const total = o.source.total();
  if (!(await o.progress('importing', 0))) throw new ImportStopped();
  // Background work: on the embedded database the organization's scores go before each chunk.
  const transactions = organizationData(o.db.background(), o.organizationId).transactions;
  let done = 0;
  let reported = performance.now();
  // What this attempt stored, counted as it goes (of rows with the same id, the first is stored); a
  // row left as it was (its id already stored) may be this job's own from an earlier attempt, and
  // then the job's rows are counted in the database.
  const tally: Tally = { imported: 0, labelled: 0, fraud: 0, first: null, last: null };
  try {
    for await (const chunk of o.source.chunks(IMPORT_CHUNK_ROWS[o.db.kind])) {
      if (o.stopped()) throw new ImportStopped();
      const stored = await transactions.insert(chunk);
      for (const r of chunk) if (stored.delete(r.transaction_id)) count(tally, r);
      done += chunk.length;
      if (done === total || performance.now() - reported >= PROGRESS_MS) {
        reported = performance.now();
        if (!(await o.progress('importing', total === 0 ? 1 : done / total))) throw new ImportStopped();
      }
      // Let the requests queued behind this chunk be answered before the next one.
      await nextTurn();
    }
  } finally {
    if (done > 0) o.onStored();
  }
  // Counted from the rows that carry this job's id when any was skipped: an earlier attempt's rows
  // (skipped this time as existing) are this job's too. (The count holds the embedded database's
  // one connection for about 0.4 s at 250,000 rows.)
  const s = tally.imported < done ? await transactions.importedBy(o.jobId) : tally;
  return {
    imported: s.imported,
    skipped_existing: Math.max(0, total - s.imported),
    labelled: s.labelled,
    fraud: s.fraud,
    first_time: isoTimeOrNull(s.first),
    last_time: isoTimeOrNull(s.last),
  };
}
