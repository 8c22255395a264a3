// Loading what a process keeps of an organization's history (src/live/tenant.ts) from the
// database, in one snapshot (with its rules and list items, when asked): transactions only from a
// floor on, everything before it as the per-entity totals and first uses the database keeps, so
// what is read does not grow with the history stored before the floor.
//
// Speed: the transactions, first uses, outcomes and totals come as one binary COPY each (numbers in
// their binary form, strings as their UTF-8 bytes), cut into pages of columns, which the history
// takes as they are, with no object or string per transaction on either side, and no text to
// parse. On PostgreSQL the COPY is read as it streams in (for a large history on a thread of its
// own: `readRows`); the embedded database's COPY writes to a device file, so there it comes in one
// piece per slice of time (0.6 s for 255,552 rows, where its aggregates took 3.9 s to build the same
// columns in pages: the load's transaction holds the one connection that much less).
// Faster still: a load may take the stored snapshot of the history (history-snapshots.ts), read
// before its transaction, and the changes made since it, read in the transaction; everything else
// (the floor, the rules and lists) is read as for a load from the rows.

import { setImmediate as turn } from 'node:timers/promises';
import { WINDOW_HORIZON_MS, type EntityTotals } from '../domain/history/horizon.ts';
import type { TransactionEntities } from '../domain/transaction.ts';
import { startOf, type PackedColumn, type TransactionColumns, type UseColumns } from '../domain/history/records.ts';
import type { Queryable, SharedSnapshot } from './db.ts';
import { changesSince, feedSnapshot, type FeedOutcome, type FeedSnapshot, type FeedTransaction } from './live-feed.ts';
import { sameSnapshot, snapshotMeta, snapshotPieces, type SnapshotMeta } from './history-snapshots.ts';
import { CopyReader, sqlLiteral } from './copy-binary.ts';
import type { HistoryRow } from './live-rows.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { inSharedSnapshot } from './shared-snapshot.ts';
import { currentStays } from './lists-store.ts';
import { liveRuleStates } from './rules-store.ts';
import { liveFieldStates } from './fields-store.ts';
import type { FieldState } from '../domain/fields.ts';
import type { InboxState } from '../domain/cases.ts';
import { liveInboxStates } from './cases-store.ts';
import type { RuleState } from './rule-state.ts';
import type { ItemStay } from '../domain/rules/lists.ts';

/** An outcome known from the floor on, of a transaction before it: its entities, label and when it
 *  became known. */
export type LoadedLabel = TransactionEntities & { label: 0 | 1; known: number };

/** What a process keeps of an organization's history, as `loadHistory` hands it over, in this order;
 *  each call may take its time (a promise), letting other work run between its steps. */
export interface HistoryLoader {
  /** Histories of at least this many transactions are read elsewhere (`rowsAt`): the load calls
   *  `prepare` as soon as it knows the organization's is one, before counting it exactly. */
  elsewhereFrom?: number;
  prepare?(): void;
  /** Transactions before `floor` come only as totals; `expected` of them from the floor on. */
  start(floor: number, expected: number): void;
  /** On PostgreSQL, after `start`: instead of being handed `uses`, `transactions`, `labels` and the
   *  totals, reads them itself (`readRows`, on other threads) in the load's database snapshot
   *  (`share` exports it); resolves true once they are read (`finish` then comes without totals),
   *  or false (without sharing) to be handed them. */
  rowsAt?(share: () => Promise<SharedSnapshot>, organizationId: string, floor: number): Promise<boolean>;
  /** A page of every customer's first uses (all-time), in the table's key order. */
  uses(page: UseColumns): void | Promise<void>;
  /** A page of the transactions from the floor on, in time order (time, then the order recorded). */
  transactions(page: TransactionColumns): void | Promise<void>;
  /** Outcomes known from the floor on, of transactions before it. */
  labels(rows: LoadedLabel[]): void | Promise<void>;
  /** Every entity's all-time totals (none after `rowsAt` read them). */
  finish(totals?: EntityTotals[]): void | Promise<void>;
  /** Instead of all the above: the stored snapshot's pieces, then the changes it lacks (in feed
   *  order); false when a change cannot be applied to it (the caller then loads from the rows). */
  restore(pieces: Uint8Array[], changes: (FeedTransaction | FeedOutcome)[]): boolean | Promise<boolean>;
}

/** Which stored snapshot a load may take: one of this history code and label delay. */
export interface SnapshotUse {
  format: string;
  labelDelay: number;
}

/** What a load read: the floor of the history, the database snapshot it read in, and, when it took
 *  the stored snapshot, how many changes were applied to it (`restored`: false when one could not
 *  be, and the history was left unfinished). */
export interface Loaded {
  floor: number;
  seen: FeedSnapshot;
  restored?: number | false;
}

/** A stored snapshot is taken while its floor is at most this much older than a fresh load's: the
 *  history then holds up to a day more than the horizon. */
export const SNAPSHOT_STALE_MS = 86_400_000;
/** …and while the changes made since are at most this many (applied one at a time: a second or so). */
export const SNAPSHOT_MAX_CHANGES = 250_000;

/** Keeps a step for after the load's database transaction, to be made on the loader then. */
type Later = (step: (into: HistoryLoader) => Promise<void>) => void;

/** A loader that keeps every call, to make them on `into` once the database transaction is over;
 *  `later` keeps a step of the load's own that calls `into`, for then, in the same order. */
function deferred(into: HistoryLoader): { loader: HistoryLoader; later: Later; replay(): Promise<boolean> } {
  const calls: (() => void | boolean | Promise<void> | Promise<boolean>)[] = [];
  return {
    later: (step) => void calls.push(() => step(into)),
    loader: {
      start: (floor, expected) => void calls.push(() => into.start(floor, expected)),
      uses: (page) => void calls.push(() => into.uses(page)),
      transactions: (page) => void calls.push(() => into.transactions(page)),
      labels: (rows) => void calls.push(() => into.labels(rows)),
      finish: (totals) => void calls.push(() => into.finish(totals)),
      restore: (pieces, changes) => {
        calls.push(() => into.restore(pieces, changes));
        return true;
      },
    },
    /** Makes the calls; false when a restore was refused. */
    async replay() {
      let ok = true;
      for (const call of calls.splice(0)) if ((await call()) === false) ok = false;
      return ok;
    },
  };
}

/** What a process keeps of an organization's rules and lists, handed over in the same snapshot. */
export interface PolicyLoader {
  rules(states: RuleState[]): void;
  stays(stays: ItemStay[]): void;
  fields(states: FieldState[]): void;
  inboxes(states: InboxState[]): void;
}

/** Transactions per page when loading a history (a few megabytes of byte strings). */
const LOAD_PAGE_ROWS = 10_000;
/** A COPY's bytes are read this many at a time (about 1 ms of work)… */
const READ_SLICE_BYTES = 64 << 10;
/** …with a turn of the event loop whenever this long has passed since the last. */
const READ_SLICE_MS = 4;
const USE_KINDS = { m: 'merchant', h: 'channel', l: 'location' } as const;
const TOTAL_KINDS = { c: 'customer', m: 'merchant', h: 'channel', f: 'field' } as const;

/**
 * Reads what a process keeps of the organization's history (src/live/tenant.ts), all in one
 * snapshot: the floor is `WINDOW_HORIZON_MS` before the newest of `now` and the newest stored
 * transaction; every customer's first uses; the transactions from the floor on, in time order
 * (time, then the order recorded), a page at a time; the outcomes known from the floor on of
 * transactions before it; and every entity's all-time totals. Returns the floor and the snapshot
 * (which database transactions' changes it saw: src/storage/live-feed.ts). What is read does not grow with the history
 * stored before the floor, only with the entities and the floor's window.
 * On PostgreSQL each page is handed over as it comes (the server reads the next meanwhile); the
 * embedded database has one connection, which a transaction holds from its first statement to its
 * last, so there everything is read first, and cut into pages and handed over once the transaction
 * is over: other statements wait for the reading only, not for the history to be built.
 */
export async function loadHistory(scope: OrganizationScope, now: number, into: HistoryLoader, policy?: PolicyLoader, use?: SnapshotUse): Promise<Loaded> {
  if (scope.db.kind === 'pglite') {
    const later = deferred(into);
    const loaded = await read(scope, now, later.loader, policy, use, later.later);
    const ok = await later.replay();
    return ok ? loaded : { ...loaded, restored: false };
  }
  return read(scope, now, into, policy, use);
}

/** Whether a stored snapshot may be taken by a load of `floor` (`use`; not too old). */
const fits = (meta: SnapshotMeta | undefined, use: SnapshotUse, floor: number): meta is SnapshotMeta =>
  meta !== undefined && meta.format === use.format && meta.labelDelay === use.labelDelay && meta.floor >= floor - SNAPSHOT_STALE_MS;

/** The changes the stored snapshot lacks, when it may be taken: not too many, no import among them
 *  (an import is loaded from the rows). */
async function changesFor(tx: Queryable, scope: OrganizationScope, meta: SnapshotMeta): Promise<(FeedTransaction | FeedOutcome)[] | undefined> {
  const changes = await changesSince(tx, scope, meta.seen, SNAPSHOT_MAX_CHANGES + 1);
  if (changes.length > SNAPSHOT_MAX_CHANGES || changes.some((c) => c.kind === 'transaction' && c.source === 'import')) return undefined;
  return changes;
}

/** The stored snapshot's bytes, read before the load's transaction (statement by statement, so
 *  that on the embedded database the others' statements run between them), when one of this code
 *  is stored that a load now could take. */
async function preread(scope: OrganizationScope, now: number, use: SnapshotUse | undefined): Promise<{ meta: SnapshotMeta; pieces: Uint8Array[] } | undefined> {
  if (!use) return undefined;
  const meta = await snapshotMeta(scope.db, scope);
  // The floor is at least `now`'s (a newer stored transaction only moves it later).
  if (!fits(meta, use, now - WINDOW_HORIZON_MS)) return undefined;
  const pieces = await snapshotPieces(scope, meta);
  return pieces && { meta, pieces };
}

async function read(
  scope: OrganizationScope,
  now: number,
  into: HistoryLoader,
  policy: PolicyLoader | undefined,
  use: SnapshotUse | undefined,
  later?: Later,
): Promise<Loaded> {
  const org = scope.organizationId;
  const stored = await preread(scope, now, use);
  return scope.db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const seen = await feedSnapshot(tx);
    const [newest] = await tx.query<{ newest: number | null }>('SELECT max(time_ms) AS newest FROM transactions WHERE organization_id = $1', [org]);
    const floor = Math.max(now, newest?.newest ?? -Infinity) - WINDOW_HORIZON_MS;
    // The snapshot read beforehand, if it is still the one stored and may be taken now.
    const meta = stored && (await snapshotMeta(tx, scope));
    const changes = stored && meta && sameSnapshot(meta, stored.meta) && fits(meta, use!, floor) ? await changesFor(tx, scope, meta) : undefined;
    if (stored && changes) {
      const ok = await into.restore(stored.pieces, changes);
      if (policy) await readPolicy(tx, scope, policy);
      return { floor: stored.meta.floor, seen, restored: ok ? changes.length : false };
    }
    const copyOut = tx.copyOut.bind(tx);
    const share = tx.shareSnapshot?.bind(tx);
    const held = await countHeld(tx, org, floor, share && into.elsewhereFrom, () => into.prepare?.());
    into.start(floor, held);
    // Read by the loader itself (on its threads) in this transaction's snapshot, or here.
    const readThere = share !== undefined && into.rowsAt !== undefined && (await into.rowsAt(share, org, floor));
    if (readThere) await into.finish();
    else if (later) {
      // The COPYs' bytes taken now, cut into pages once the transaction has let the connection go.
      const uses = await inOnePiece(copyOut(COPY_USES(org)));
      const slices: Uint8Array[][] = [];
      for (const [from, to] of timeSlices(floor, newest?.newest ?? null, held)) slices.push(await inOnePiece(copyOut(COPY_TRANSACTIONS(org, from, to))));
      const labels = await inOnePiece(copyOut(COPY_LABELS(org, floor)));
      const totals = await inOnePiece(copyOut(COPY_TOTALS(org)));
      later(async (loader) => {
        await copiedUses(uses, (page) => loader.uses(page));
        // Each slice let go once it is in pages.
        for (let slice = slices.shift(); slice; slice = slices.shift()) await copiedHistory(slice, (page) => loader.transactions(page));
        await loader.labels(await copiedLabels(labels));
        await loader.finish(await copiedTotals(totals));
      });
    } else {
      // Read here as the COPYs stream in; the totals finish the load.
      await readAll(copyOut, org, floor, {
        uses: into.uses.bind(into),
        transactions: into.transactions.bind(into),
        labels: into.labels.bind(into),
        totals: into.finish.bind(into),
      });
    }
    if (policy) await readPolicy(tx, scope, policy);
    return { floor, seen };
  });
}

/** How many transactions a load from `floor` holds. When it is to be read elsewhere from
 *  `elsewhereFrom` on, a count that stops there comes first (a few milliseconds), and `large` is told
 *  before the exact count (a tenth of a second a million rows) when it reaches it. */
async function countHeld(tx: Queryable, org: string, floor: number, elsewhereFrom: number | undefined, large: () => void): Promise<number> {
  const count = async (limit?: number) => {
    const [row] = await tx.query<{ n: number }>(
      `SELECT count(*)::float8 AS n FROM (SELECT 1 FROM transactions WHERE organization_id = $1 AND time_ms >= $2 ${limit === undefined ? '' : 'LIMIT $3'}) AS held`,
      limit === undefined ? [org, floor] : [org, floor, limit],
    );
    return row?.n ?? 0;
  };
  if (elsewhereFrom !== undefined && Number.isFinite(elsewhereFrom)) {
    const few = await count(elsewhereFrom);
    if (few < elsewhereFrom) return few;
    large();
  }
  return count();
}

async function readPolicy(tx: Queryable, scope: OrganizationScope, policy: PolicyLoader): Promise<void> {
  policy.rules(await liveRuleStates(tx, scope));
  policy.fields(await liveFieldStates(tx, scope));
  policy.inboxes(await liveInboxStates(tx, scope));
  await currentStays(tx, scope, (stays) => policy.stays(stays));
}

/** The transactions a load reads from `from` on (before `to`, when given), for a binary COPY
 *  (whose statement takes no parameters), in time order. */
const COPY_TRANSACTIONS = (organizationId: string, from: number, to?: number) => `
  SELECT time_ms::float8, amount::float8, coalesce(label, -1)::int2, label_known_ms::float8,
         transaction_id, customer_id, merchant_id, location, payment_type, to_json(field_keys)::text
  FROM transactions WHERE organization_id = ${sqlLiteral(organizationId)} AND time_ms >= ${sqlLiteral(from)}
       ${to === undefined ? '' : `AND time_ms < ${sqlLiteral(to)}`}
  ORDER BY time_ms, seq`;
const TRANSACTION_FIELDS = ['float8', 'float8', 'int2', 'float8', 'text', 'text', 'text', 'text', 'text', 'json'] as const;

/** The outcomes known from the floor on of transactions before it, in the order they became known
 *  (the outcomes' index gives it): the order they are filed in is the history's layout, which two
 *  loads of the same rows must share, and a scan's own order can differ from one read to the next. */
const COPY_LABELS = (organizationId: string, floor: number) => `
  SELECT customer_id, merchant_id, location, payment_type, label::int2, label_known_ms::float8
  FROM transactions WHERE organization_id = ${sqlLiteral(organizationId)} AND label IS NOT NULL
       AND label_known_ms >= ${sqlLiteral(floor)} AND time_ms < ${sqlLiteral(floor)}
  ORDER BY label_known_ms, seq`;
const LABEL_FIELDS = ['text', 'text', 'text', 'text', 'int2', 'float8'] as const;

/** Every entity's all-time totals (NULL: no fraud known). */
const COPY_TOTALS = (organizationId: string) => `
  SELECT kind::text, key, transactions::float8, amount_sum, amount_squares, last_ms, labels::float8, frauds::float8, first_fraud_known_ms
  FROM entity_totals t WHERE organization_id = ${sqlLiteral(organizationId)} ORDER BY t.kind, t.key`;
const TOTAL_FIELDS = ['char', 'text', 'float8', 'float8', 'float8', 'float8', 'float8', 'float8', 'float8'] as const;

/** On the embedded database, whose COPY comes in one piece, the transactions come in slices of
 *  about this many, so that its thread never holds a whole history's bytes (and their copies) at
 *  once: at 500,000 transactions in one piece, the process's peak was twice a load's in pages. */
const COPY_SLICE_ROWS = 50_000;

/** The spans of time [from, to) that cut `held` transactions from `floor` to `newest` into slices
 *  of about COPY_SLICE_ROWS (equal spans: a history's window is about evenly filled); the last
 *  is open-ended. */
export function timeSlices(floor: number, newest: number | null, held: number): [number, number | undefined][] {
  const k = Math.ceil(held / COPY_SLICE_ROWS);
  if (k <= 1 || newest === null || !(newest > floor)) return [[floor, undefined]];
  const span = (newest - floor) / k;
  const bounds = Array.from({ length: k - 1 }, (_, i) => floor + (i + 1) * span);
  return [floor, ...bounds].map((from, i) => [from, bounds[i]]);
}

/** Every first use, for a binary COPY, in the table's key order (its columns named as the table's:
 *  `kind` alone would be the text it is sent as, which the key's index does not give in order). */
const COPY_USES = (organizationId: string) => `
  SELECT customer_id, kind::text, key, first_ms::float8 FROM customer_uses u
  WHERE organization_id = ${sqlLiteral(organizationId)} ORDER BY u.customer_id, u.kind, u.key`;
const USE_FIELDS = ['text', 'char', 'text', 'float8'] as const;

/** How a field of a COPY row is taken: a float8 (NULL: NaN), an int2 (as a byte), a string's
 *  bytes, a one-character string as its byte, a JSON text parsed (NULL: null). */
type FieldKind = 'float8' | 'int2' | 'text' | 'char' | 'json';
type Column = Float64Array | Int8Array | Uint8Array | PackedColumn | unknown[] | undefined;

/** A string column being filled: its bytes, end to end, and where each value ends. */
class GrowingColumn {
  bytes = Buffer.allocUnsafe(LOAD_PAGE_ROWS * 24);
  ends = new Int32Array(LOAD_PAGE_ROWS);
  used = 0;

  push(i: number, from: Buffer, start: number, length: number): void {
    if (length < 0) throw new Error('a history row has a NULL where a string was expected');
    if (this.used + length > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.used + length));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    const bytes = this.bytes;
    let at = this.used;
    // Short values (ids, cities): a loop is cheaper than a native copy's call.
    if (length <= 64) for (let j = start, end = start + length; j < end; j++) bytes[at++] = from[j]!;
    else at += from.copy(bytes, at, start, start + length);
    this.used = at;
    this.ends[i] = at;
  }

  /** The column of the page's `n` rows (a copy: this one is filled again). */
  take(n: number): PackedColumn {
    const column = { bytes: Uint8Array.prototype.slice.call(this.bytes, 0, this.used) as Uint8Array, ends: this.ends.slice(0, n) };
    this.used = 0;
    return column;
  }
}

/** A page of COPY rows being filled, a column per field. */
class CopyPage {
  private readonly kinds: readonly FieldKind[];

  n = 0;
  private columns: Column[] = [];
  private readonly strings: (GrowingColumn | undefined)[];

  constructor(kinds: readonly FieldKind[]) {
    this.kinds = kinds;
    this.strings = kinds.map((k) => (k === 'text' ? new GrowingColumn() : undefined));
    this.fresh();
  }

  private fresh(): void {
    this.columns = this.kinds.map((k) =>
      k === 'float8'
        ? new Float64Array(LOAD_PAGE_ROWS)
        : k === 'int2'
          ? new Int8Array(LOAD_PAGE_ROWS)
          : k === 'char'
            ? new Uint8Array(LOAD_PAGE_ROWS)
            : undefined,
    );
    this.n = 0;
  }

  add(bytes: Buffer, view: DataView, starts: Int32Array, lengths: Int32Array): void {
    const { kinds, columns, n } = this;
    for (let f = 0; f < kinds.length; f++) {
      const at = starts[f]!;
      const length = lengths[f]!;
      switch (kinds[f]) {
        case 'float8':
          (columns[f] as Float64Array)[n] = length < 0 ? Number.NaN : view.getFloat64(at);
          break;
        case 'int2':
          (columns[f] as Int8Array)[n] = view.getInt16(at);
          break;
        case 'char':
          (columns[f] as Uint8Array)[n] = bytes[at]!;
          break;
        case 'text':
          this.strings[f]!.push(n, bytes, at, length);
          break;
        case 'json':
          if (length >= 0) {
            const values = (columns[f] ??= new Array<unknown>(LOAD_PAGE_ROWS).fill(null)) as unknown[];
            values[n] = JSON.parse(bytes.toString('utf8', at, at + length));
          }
          break;
      }
    }
    this.n++;
  }

  /** The page's columns (views of those filled); the next rows go into new ones. */
  take(): { n: number; columns: Column[] } {
    const n = this.n;
    const columns = this.columns.map((c, f) => {
      const strings = this.strings[f];
      if (strings) return strings.take(n);
      return Array.isArray(c) ? c.slice(0, n) : (c as Float64Array | Int8Array | Uint8Array | undefined)?.subarray(0, n);
    });
    this.fresh();
    return { n, columns };
  }
}

/**
 * The rows of a binary COPY as pages of up to LOAD_PAGE_ROWS rows of columns (`kinds`), each handed
 * over once it is full: the stream waits meanwhile, so what is held is a page and what the socket
 * buffers, however many rows come. When `onPage` throws, the rest of the COPY is read and dropped
 * (readCopy) before the error is passed on.
 */
async function copiedPages(
  chunks: CopyChunks,
  kinds: readonly FieldKind[],
  onPage: (page: { n: number; columns: Column[] }) => void | Promise<void>,
): Promise<void> {
  const reader = new CopyReader(kinds.length);
  const page = new CopyPage(kinds);
  const full: { n: number; columns: Column[] }[] = [];
  let since = performance.now();
  for await (const chunk of chunks) {
    // A chunk is what the driver buffered meanwhile (megabytes, when the process was busy): read in
    // slices, with a turn of the event loop whenever READ_SLICE_MS have passed, so that a load never
    // holds other requests for longer.
    for (let at = 0; at < chunk.length; at += READ_SLICE_BYTES) {
      reader.push(chunk.subarray(at, Math.min(chunk.length, at + READ_SLICE_BYTES)), (bytes, view) => {
        page.add(bytes, view, reader.starts, reader.lengths);
        if (page.n === LOAD_PAGE_ROWS) full.push(page.take());
      });
      for (const p of full.splice(0)) await onPage(p);
      if (performance.now() - since >= READ_SLICE_MS) {
        await turn();
        since = performance.now();
      }
    }
  }
  if (!reader.ended) throw new Error('a COPY of the history ended early');
  if (page.n > 0) await onPage(page.take());
}

/** Where `readRows` hands what it reads, in this order. */
export type RowsInto = Pick<HistoryLoader, 'uses' | 'transactions' | 'labels'> & {
  totals(totals: EntityTotals[]): void | Promise<void>;
  /** Called before each piece the database sends is read: may block the thread (requests first). */
  hold?(): void;
};

/** What a load reads of the organization's rows from `floor` on (its first uses, its transactions,
 *  the outcomes known from the floor on of earlier ones, every entity's totals: `HistoryLoader`),
 *  read on a connection of this thread's own in a snapshot shared by the load's transaction
 *  (`HistoryLoader.rowsAt`). */
export function readRows(shared: SharedSnapshot, organizationId: string, floor: number, into: RowsInto): Promise<void> {
  return inSharedSnapshot(shared, (copyOut) => readAll(copyOut, organizationId, floor, into));
}

/** Reads, as each COPY streams in, what `readRows` reads: on its thread, or on the load's own
 *  connection. */
async function readAll(copyOut: (select: string) => CopyChunks, organizationId: string, floor: number, into: RowsInto): Promise<void> {
  const held = (chunks: CopyChunks) => (into.hold ? holding(chunks, into.hold) : chunks);
  await copiedUses(held(copyOut(COPY_USES(organizationId))), (page) => into.uses(page));
  await copiedHistory(held(copyOut(COPY_TRANSACTIONS(organizationId, floor))), (page) => into.transactions(page));
  await into.labels(await copiedLabels(held(copyOut(COPY_LABELS(organizationId, floor)))));
  await into.totals(await copiedTotals(held(copyOut(COPY_TOTALS(organizationId)))));
}

/** A binary COPY's chunks: as they come, or already read. */
type CopyChunks = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** The chunks, with `hold` called before each is taken. */
async function* holding(chunks: CopyChunks, hold: () => void): AsyncIterable<Uint8Array> {
  for await (const chunk of chunks) {
    hold();
    yield chunk;
  }
}

/** A COPY's chunks, all read. */
async function inOnePiece(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const all: Uint8Array[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

/** A binary COPY of transactions (COPY_TRANSACTIONS) in pages (`copiedPages`), checked to be in time order. */
async function copiedHistory(chunks: CopyChunks, onPage: (page: TransactionColumns) => void | Promise<void>) {
  let last = -Infinity;
  await copiedPages(chunks, TRANSACTION_FIELDS, ({ n, columns: c }) => {
    const times = c[0] as Float64Array;
    if (n > 0 && times[0]! < last) throw new Error('a history page came out of time order');
    for (let i = 1; i < n; i++) if (times[i]! < times[i - 1]!) throw new Error('a history page came out of time order');
    last = times[n - 1]!;
    return onPage({
      count: n,
      times,
      amounts: c[1] as Float64Array,
      labels: c[2] as Int8Array,
      knownAt: c[3] as Float64Array,
      ids: c[4] as PackedColumn,
      customers: c[5] as PackedColumn,
      merchants: c[6] as PackedColumn,
      locations: c[7] as PackedColumn,
      paymentTypes: c[8] as PackedColumn,
      keys: c[9] as (string[] | null)[] | undefined,
    });
  });
}

/** A binary COPY of first uses (COPY_USES) in pages. */
function copiedUses(chunks: CopyChunks, onPage: (page: UseColumns) => void | Promise<void>) {
  return copiedPages(chunks, USE_FIELDS, ({ n, columns: c }) =>
    onPage({ count: n, customers: c[0] as PackedColumn, kinds: c[1] as Uint8Array, keys: c[2] as PackedColumn, firsts: c[3] as Float64Array }),
  );
}

/** A string of a packed column. */
function packedText(p: PackedColumn, i: number): string {
  return Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength).toString('utf8', startOf(p, i), p.ends[i]!);
}

/** A binary COPY of outcomes (COPY_LABELS), all of them. */
async function copiedLabels(chunks: CopyChunks): Promise<LoadedLabel[]> {
  const rows: LoadedLabel[] = [];
  await copiedPages(chunks, LABEL_FIELDS, ({ n, columns: c }) => {
    const [customers, merchants, locations, paymentTypes] = c as PackedColumn[];
    const labels = c[4] as Int8Array;
    const known = c[5] as Float64Array;
    for (let i = 0; i < n; i++) {
      rows.push({
        customer_id: packedText(customers!, i),
        merchant_id: packedText(merchants!, i),
        location: packedText(locations!, i),
        payment_type: packedText(paymentTypes!, i),
        label: labels[i] as 0 | 1,
        known: known[i]!,
      });
    }
  });
  return rows;
}

/** A binary COPY of every entity's totals (COPY_TOTALS). */
async function copiedTotals(chunks: CopyChunks): Promise<EntityTotals[]> {
  const totals: EntityTotals[] = [];
  await copiedPages(chunks, TOTAL_FIELDS, ({ n, columns: c }) => {
    const kinds = c[0] as Uint8Array;
    const keys = c[1] as PackedColumn;
    const [transactions, amountSum, amountSquares, last, labels, frauds, firstFraudKnown] = c.slice(2) as Float64Array[];
    for (let i = 0; i < n; i++) {
      const fraudKnown = firstFraudKnown![i]!;
      totals.push({
        kind: TOTAL_KINDS[String.fromCharCode(kinds[i]!) as keyof typeof TOTAL_KINDS],
        key: packedText(keys, i),
        transactions: transactions![i]!,
        amountSum: amountSum![i]!,
        amountSquares: amountSquares![i]!,
        last: last![i]!,
        labels: labels![i]!,
        frauds: frauds![i]!,
        firstFraudKnown: Number.isNaN(fraudKnown) ? null : fraudKnown,
      });
    }
  });
  return totals;
}

/** The rows of a page as objects (for tests and inspection; a load never makes them). */
export function pageRows(c: TransactionColumns): HistoryRow[] {
  return Array.from({ length: c.count }, (_, i) => ({
    transaction_id: packedText(c.ids, i),
    time: c.times[i]!,
    amount: c.amounts[i]!,
    customer_id: packedText(c.customers, i),
    merchant_id: packedText(c.merchants, i),
    location: packedText(c.locations, i),
    payment_type: packedText(c.paymentTypes, i),
    label: c.labels[i] === -1 ? null : (c.labels[i] as 0 | 1),
    label_known_ms: c.labels[i] === -1 ? null : c.knownAt[i]!,
    keys: c.keys?.[i] ?? null,
  }));
}

/** The rows of a page of first uses as objects (for tests and inspection; a load never makes them). */
export function useRows(u: UseColumns): { customer_id: string; kind: 'merchant' | 'channel' | 'location'; key: string; first: number }[] {
  return Array.from({ length: u.count }, (_, i) => ({
    customer_id: packedText(u.customers, i),
    kind: USE_KINDS[String.fromCharCode(u.kinds[i]!) as keyof typeof USE_KINDS],
    key: packedText(u.keys, i),
    first: u.firsts[i]!,
  }));
}
