// Each organization's live history in this process: loaded from the database the first time the
// organization is scored, then kept in step by the live tail (src/live/tail.ts), which hands every
// change any process records to the organization it belongs to, in feed order. Nothing is shared
// between organizations: a tenant holds one organization's transactions, ids, rings, outcomes,
// rules and lists, and the scorer reads only the tenant it is handed.
// A tenant holds what features can reach: the last 31 days of transactions, and before that the
// per-entity totals the database keeps (storage/history-load.ts), so loading costs the same however
// much older history is stored; older evidence is read when a response lists it (`earlier`).
// Changes the tail reads during a load are applied once it is done, skipping those the load's
// snapshot already had, so a tenant misses nothing and counts nothing twice. A change that cannot
// be placed (older than the floor, an outcome the totals cannot follow, an import) makes the
// tenant load afresh on its next use.
// A large history is loaded from the snapshot of it the database keeps (history-snapshots.ts) and
// the changes since, and writes that snapshot after a load that had many to apply; a tenant in use
// is built again in the background when its snapshot lags or its floor does (`refresh`), so a
// restart finds a recent one (docs/operating.md, "Snapshots of a history").

import { History } from '../domain/history/history.ts';
import { WINDOW_HORIZON_MS } from '../domain/history/horizon.ts';
import { historyBytes, HISTORY_FORMAT, restoring } from '../domain/history/snapshot.ts';
import { channelOf, type Transaction } from '../domain/transaction.ts';
import type { Ring } from '../domain/rings.ts';
import { MAX_EVIDENCE, RingIndex, type EarlierEvidence, type ScoreContext, type ScoreInput, type ScoredEntities } from '../scoring/scorer.ts';
import type { Db } from '../storage/db.ts';
import type { HistoryLoader, PolicyLoader } from '../storage/history-load.ts';
import type { HistoryRow } from '../storage/live-rows.ts';
import { organizationData, type OrganizationData } from '../storage/organization-data.ts';
import { seenBy, type FeedChange, type FeedSnapshot } from '../storage/live-feed.ts';
import type { DecisionLog } from './decision-log.ts';
import { storedRings } from './ring-windows.ts';
import { Policy } from './policy.ts';

/** Rows a load hands to a history between two turns of the event loop (a few milliseconds). */
const LOAD_SLICE = 4_096;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `work(from, to)` over [0, n) a slice at a time, with a turn of the event loop after each. */
async function inSlices(n: number, work: (from: number, to: number) => void): Promise<void> {
  for (let from = 0; from < n; from += LOAD_SLICE) {
    work(from, Math.min(n, from + LOAD_SLICE));
    await turn();
  }
}

/** What makes a request with a known transaction id a retry rather than a different transaction. */
export type TransactionIdentity = Pick<ScoreInput, 'amount' | 'customer_id' | 'merchant_id'>;

/** A retry carries the recorded transaction's amount, customer and merchant. */
export function sameTransaction(recorded: TransactionIdentity, input: TransactionIdentity): boolean {
  return recorded.amount === input.amount && recorded.customer_id === input.customer_id && recorded.merchant_id === input.merchant_id;
}

export class Tenant {
  /** Replaced whole when a load takes the stored snapshot (`loader().restore`). */
  history: History;
  /** The organization's rules and lists, evaluated on every score after the model. */
  readonly policy = new Policy();
  /** Changes of the live feed applied since it was built. */
  changes = 0;
  /** What this organization's requests are scored against: its history, its rings and its rules.
   *  The scorer records nothing: a scored transaction reaches the history once the decision log
   *  stores it (`Tenants.apply`), or at once with write-behind durability (`add`, from
   *  app/score-and-record.ts). */
  readonly context: ScoreContext;

  constructor(
    readonly organizationId: string,
    readonly data: OrganizationData,
    labelDelay: number,
  ) {
    this.history = Tenant.emptyHistory(labelDelay);
    this.context = { history: this.history, rings: new RingIndex([]), rules: this.policy };
  }

  /** A tenant's history before its load: every record kept, ids indexed. */
  private static emptyHistory(labelDelay: number): History {
    const h = new History(labelDelay).withRecords();
    h.transactions.indexIds();
    return h;
  }

  private setHistory(h: History): void {
    this.history = h;
    this.context.history = h;
  }

  /** What `OrganizationData.loadHistory` hands over, into this tenant's history, a few thousand
   *  rows at a time with a turn of the event loop between them: a load of millions of transactions
   *  takes seconds of this thread, and other organizations' requests are answered meanwhile. */
  loader(): HistoryLoader {
    let h = this.history;
    return {
      start: (floor, expected) => {
        h.reserve(expected);
        h.loadFrom(floor);
      },
      restore: async (pieces, changes) => {
        let restored: History;
        try {
          const steps = restoring(pieces);
          let step = steps.next();
          for (; !step.done; step = steps.next()) await turn();
          restored = step.value;
        } catch {
          // Bytes this code cannot read (damaged): the rows are read instead, and store a new one.
          return false;
        }
        if (restored.labelDelay !== h.labelDelay || !restored.transactions.indexed) return false;
        this.setHistory((h = restored));
        let ok = true;
        await inSlices(changes.length, (from, to) => {
          for (let i = from; i < to && ok; i++) ok = this.applyChange(changes[i]!);
        });
        return ok;
      },
      uses: (page) => inSlices(page.count, (from, to) => h.loadUseColumns(page, from, to)),
      transactions: (page) => inSlices(page.count, (from, to) => h.addColumns(page, from, to)),
      labels: (rows) => inSlices(rows.length, (from, to) => {
        for (let i = from; i < to; i++) h.loadLabel(rows[i]!, rows[i]!.label, rows[i]!.known);
      }),
      finish: async (totals) => {
        for (const _ of h.finishing(totals)) await turn();
      },
    };
  }

  /** What `OrganizationData.loadHistory` hands over of the rules and lists, into this tenant. */
  policyLoader(): PolicyLoader {
    return {
      rules: (states) => {
        for (const s of states) this.policy.setRule(s);
      },
      stays: (stays) => {
        for (const s of stays) this.policy.applyStay(s);
      },
    };
  }

  /** The transactions before the floor that a response's evidence would list (the history holds
   *  them only in totals), read from the database; undefined when it needs none (the usual case). */
  async earlier(entities: ScoredEntities): Promise<EarlierEvidence | undefined> {
    const h = this.history;
    let out: EarlierEvidence | undefined;
    for (const role of ['customer', 'merchant', 'channel'] as const) {
      const key = role === 'customer' ? entities.customer_id : role === 'merchant' ? entities.merchant_id : channelOf(entities);
      const missing = h.recordsMissing(role, key, MAX_EVIDENCE);
      if (missing === 0) continue;
      // Those before the oldest it holds of the entity; one held already (placed late) is left out.
      const rows = await this.data.earlier(role, entities, h.heldSince(role, key), MAX_EVIDENCE);
      (out ??= {})[role] = rows.filter((r) => !this.has(r.transaction_id)).slice(0, missing);
    }
    return out;
  }

  /** Adds a transaction to the history (one older than its newest is placed by its time). */
  add(tx: Transaction & { transaction_id: string }): void {
    this.history.add(tx);
  }

  addStored(r: HistoryRow): void {
    const tx: Transaction & { transaction_id: string } = {
      transaction_id: r.transaction_id,
      time: r.time,
      amount: r.amount,
      customer_id: r.customer_id,
      merchant_id: r.merchant_id,
      location: r.location,
      payment_type: r.payment_type,
    };
    if (r.label === 0 || r.label === 1) {
      tx.label = r.label;
      tx.labelKnownAt = r.label_known_ms!;
    }
    this.add(tx);
  }

  setRings(rings: Ring[]): void {
    this.context.rings = new RingIndex(rings);
  }

  /** Whether the organization has a transaction with this id. */
  has(transactionId: string): boolean {
    return this.history.transactions.find(transactionId) >= 0;
  }

  /** Whether a request is the same transaction as the recorded one with its id (`sameTransaction`). */
  sameAs(transactionId: string, input: TransactionIdentity): boolean {
    const r = this.history.transactions;
    const k = r.find(transactionId);
    return sameTransaction({ amount: r.amount(k), customer_id: r.customerId(k), merchant_id: r.merchantId(k) }, input);
  }

  /** Applies one change of the live feed; false when the tenant must be loaded afresh. */
  applyChange(c: FeedChange): boolean {
    if (c.kind === 'rule') {
      this.policy.setRule(c.rule);
      return true;
    }
    if (c.kind === 'list_item') {
      this.policy.applyStay(c.stay);
      return true;
    }
    if (c.kind === 'outcome') {
      // Features see the new outcome from `known_ms` on.
      const k = this.history.transactions.find(c.transaction_id);
      if (k >= 0) {
        this.history.setOutcome(k, c.label, c.known_ms);
        return true;
      }
      try {
        this.history.relabel(c, c.from_label ?? undefined, c.from_known_ms ?? Number.NaN, c.label, c.known_ms);
        return true;
      } catch {
        // The totals cannot follow (HorizonError): a fresh load can.
        return false;
      }
    }
    // Recorded by this process already (write-behind).
    if (this.has(c.transaction_id)) return true;
    // An import brings old transactions in bulk: loading again places them at once.
    if (c.source === 'import') return false;
    try {
      this.addStored(c);
      return true;
    } catch {
      // Older than the history's horizon (HorizonError): only a fresh load can place it. Any other
      // failure is treated alike, so one change can never stop the tail for every organization.
      return false;
    }
  }
}

/** When a tenant's history is written to the database as a snapshot (src/storage/history-snapshots.ts). */
export interface SnapshotPolicy {
  /** After a load from the rows, when it holds at least this many transactions (smaller ones load
   *  from the rows in well under a second). */
  minTransactions: number;
  /** After a load from the stored snapshot, when at least this many changes were applied to it. */
  rewriteAfter: number;
  /** A tenant in use is built again in the background (`Tenants.refresh`) once it has taken this
   *  many changes. */
  refreshAfter: number;
}

export const SNAPSHOTS: SnapshotPolicy = { minTransactions: 50_000, rewriteAfter: 20_000, refreshAfter: 100_000 };

/** How often tenants are looked at for a refresh. */
const REFRESH_CHECK_MS = 60_000;
/** A tenant whose floor is this far behind a fresh load's is built again from the rows. */
const FLOOR_LAG_MS = 12 * 3_600_000;

/** Copies of a history's snapshot pieces, one piece per turn of the event loop (the history must not
 *  change meanwhile: its tenant is still loading). */
async function copied(pieces: Uint8Array[]): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (const p of pieces) {
    out.push(Uint8Array.prototype.slice.call(p));
    await turn();
  }
  return out;
}

export class Tenants {
  private readonly loaded = new Map<string, Promise<Tenant>>();
  /** Tenants ready for the tail's changes. */
  private readonly ready = new Map<string, Tenant>();
  /** The snapshot each ready tenant was loaded in: the changes it saw are in the tenant already. */
  private readonly loadedIn = new Map<string, FeedSnapshot>();
  /** Changes read by the tail while the organization loads, applied when the load is done. */
  private readonly loading = new Map<string, FeedChange[]>();

  constructor(
    private readonly db: Db,
    private readonly log: DecisionLog,
    private readonly labelDelay: number,
    private readonly clock: () => number,
    /** Called once a load is done: it leaves its pages and their rows as garbage, which a full
     *  collection frees and the allocator can hand back (src/addon/memory.ts). */
    private readonly afterLoad: () => void = () => {},
    /** When to write snapshots (undefined: never write or read one). */
    private readonly snapshots: SnapshotPolicy | undefined = SNAPSHOTS,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  /** Snapshot writes in flight. */
  private readonly writes = new Set<Promise<unknown>>();

  /** Resolves once the snapshot writes begun so far have ended (stored or failed). */
  async settled(): Promise<void> {
    while (this.writes.size) await Promise.allSettled([...this.writes]);
  }

  /** The organization's tenant, loaded on first use. */
  get(organizationId: string): Promise<Tenant> {
    let t = this.loaded.get(organizationId);
    if (!t) {
      const buffer: FeedChange[] = [];
      this.loading.set(organizationId, buffer);
      t = this.load(organizationId, buffer);
      const attempt = t;
      this.loaded.set(organizationId, attempt);
      // A load that failed (the database was down) is tried again by the next request.
      attempt.catch(() => {
        if (this.loaded.get(organizationId) === attempt) this.forget(organizationId);
      });
    }
    return t;
  }

  /** Drops the organization's tenant, so that the next use loads it again (after an import). */
  forget(organizationId: string): void {
    this.loaded.delete(organizationId);
    this.ready.delete(organizationId);
    this.loadedIn.delete(organizationId);
    this.loading.delete(organizationId);
  }

  get size(): number {
    return this.loaded.size;
  }

  /** Transactions the loaded tenants' histories hold. */
  heldTransactions(): number {
    let n = 0;
    for (const t of this.ready.values()) n += t.history.size;
    return n;
  }

  /** The organizations this process has a tenant of. */
  organizations(): IterableIterator<string> {
    return this.ready.keys();
  }

  /** Reads the organization's stored rings into its tenant, if this process has it. */
  async refreshRings(organizationId: string): Promise<void> {
    if (!this.ready.has(organizationId)) return;
    const rings = await storedRings(this.db, organizationId);
    this.ready.get(organizationId)?.setRings(rings);
  }

  /** Changes in feed order (the live tail's), or this process's own scored transactions just
   *  committed: each goes to its own organization's tenant, if this process has it. */
  apply(changes: readonly FeedChange[]): void {
    for (const c of changes) {
      this.refreshing.get(c.organization_id)?.push(c);
      const tenant = this.ready.get(c.organization_id);
      if (tenant) {
        if (seenBy(this.loadedIn.get(c.organization_id)!, c.xid)) continue;
        if (tenant.applyChange(c)) tenant.changes++;
        else this.forget(c.organization_id);
      } else {
        this.loading.get(c.organization_id)?.push(c);
      }
    }
  }

  /** Loads the organization's history; `buffer` collects what the tail reads meanwhile (it is
   *  also this load's ticket: a tenant forgotten during its load is handed to the requests that
   *  waited for it, but not kept). */
  private async load(organizationId: string, buffer: FeedChange[]): Promise<Tenant> {
    return this.build(organizationId, buffer, true, false, (tenant, seen) => {
      if (this.loading.get(organizationId) !== buffer) return;
      this.loading.delete(organizationId);
      this.ready.set(organizationId, tenant);
      this.loadedIn.set(organizationId, seen);
    });
  }

  /**
   * Builds a tenant of the organization: from the stored snapshot when `snapshot` (and it can be
   * taken), else from the rows; writes a snapshot of it when one is due (SnapshotPolicy) or `write`. The
   * changes the tail put in `buffer` meanwhile and the load did not see are applied, and `ready`
   * called, in one synchronous step, so that no change falls between the two.
   */
  private async build(organizationId: string, buffer: FeedChange[], snapshot: boolean, write: boolean, ready: (tenant: Tenant, seen: FeedSnapshot) => void): Promise<Tenant> {
    // What this process has answered but not stored yet belongs in the history too.
    await this.log.flush();
    const data = organizationData(this.db, organizationId);
    let use = snapshot && this.snapshots ? { format: HISTORY_FORMAT, labelDelay: this.labelDelay } : undefined;
    for (;;) {
      const tenant = new Tenant(organizationId, data, this.labelDelay);
      const loaded = await data.loadHistory(this.clock(), tenant.loader(), tenant.policyLoader(), use);
      // A change the stored snapshot could not take: from the rows, then.
      if (loaded.restored === false) {
        use = undefined;
        continue;
      }
      const { seen } = loaded;
      tenant.setRings(await storedRings(this.db, organizationId));
      // Copied now, as the history stands in `seen`, before the changes below move it on.
      // After a load from the rows (or when asked to) a large history is stored; after one from the
      // snapshot, once it had many changes to apply.
      const bySize = write || loaded.restored === undefined;
      const due = this.snapshots && (bySize ? tenant.history.size >= this.snapshots.minTransactions : loaded.restored! >= this.snapshots.rewriteAfter);
      const pieces = due ? await copied(historyBytes(tenant.history)) : undefined;
      // A change that needs a fresh load (an import) means reading again: the next read has
      // everything the buffer had.
      const changes = buffer.splice(0).filter((c) => !seenBy(seen, c.xid));
      if (!changes.every((c) => tenant.applyChange(c))) continue;
      // What a restart would have to apply to the stored snapshot (`refreshDue`).
      tenant.changes = (pieces ? 0 : (loaded.restored ?? 0)) + changes.length;
      ready(tenant, seen);
      if (pieces) {
        const meta = { format: HISTORY_FORMAT, labelDelay: this.labelDelay, floor: loaded.floor, seen, transactions: tenant.history.size, writtenAt: Date.now() };
        const stored = data.writeHistorySnapshot(meta, pieces).then(
          // The copies are garbage now: handed back at once, not at the next full collection.
          () => this.afterLoad(),
          (e) => this.onError(e),
        );
        this.writes.add(stored);
        void stored.finally(() => this.writes.delete(stored));
      }
      this.afterLoad();
      return tenant;
    }
  }

  /** Organizations being built again in the background (`refresh`), and the tail's changes for them
   *  meanwhile. */
  private readonly refreshing = new Map<string, FeedChange[]>();

  /**
   * Whether the organization's tenant is due to be built again (`refresh`): it holds enough to be
   * worth a snapshot, and since it was built it has taken many changes (the stored snapshot lags:
   * a restart would have them all to apply), or its floor lags the horizon by half a day (it holds
   * that much more than a fresh load would).
   */
  refreshDue(organizationId: string): boolean {
    const tenant = this.ready.get(organizationId);
    if (!tenant || !this.snapshots || this.refreshing.has(organizationId) || tenant.history.size < this.snapshots.minTransactions) return false;
    return tenant.changes >= this.snapshots.refreshAfter || tenant.history.heldFrom < this.clock() - WINDOW_HORIZON_MS - FLOOR_LAG_MS;
  }

  /**
   * Builds the organization's tenant again beside the one in use, which keeps answering meanwhile,
   * then puts it in its place: from the stored snapshot and the changes since (which writes a newer
   * snapshot), or from the rows when the floor lags (which moves the floor, dropping what has left
   * the horizon). The tail's changes reach both meanwhile. Holds a second copy of the history while
   * it runs. Nothing is replaced if the tenant was dropped meanwhile (an import).
   */
  async refresh(organizationId: string): Promise<void> {
    const current = this.ready.get(organizationId);
    if (!current || this.refreshing.has(organizationId)) return;
    const buffer: FeedChange[] = [];
    this.refreshing.set(organizationId, buffer);
    try {
      const fromRows = current.history.heldFrom < this.clock() - WINDOW_HORIZON_MS - FLOOR_LAG_MS;
      await this.build(organizationId, buffer, !fromRows, true, (tenant, seen) => {
        if (this.ready.get(organizationId) !== current) return;
        this.ready.set(organizationId, tenant);
        this.loadedIn.set(organizationId, seen);
        this.loaded.set(organizationId, Promise.resolve(tenant));
      });
    } finally {
      this.refreshing.delete(organizationId);
    }
  }

  /** Refreshes, one at a time, every tenant that is due (`refreshDue`). */
  async refreshAll(): Promise<void> {
    for (const id of [...this.ready.keys()]) {
      if (this.stopped) return;
      if (this.refreshDue(id)) await this.refresh(id).catch((e) => this.onError(e));
    }
  }

  private timer: NodeJS.Timeout | undefined;
  private refreshingAll: Promise<void> | undefined;
  private stopped = false;

  /** Looks for tenants due to be refreshed every `periodMs`. */
  startRefreshing(periodMs = REFRESH_CHECK_MS): void {
    this.timer = setInterval(() => {
      this.refreshingAll ??= this.refreshAll().finally(() => (this.refreshingAll = undefined));
    }, periodMs);
    this.timer.unref();
  }

  /** Stops refreshing, and waits for a refresh and snapshot writes in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.refreshingAll;
    await this.settled();
  }
}
