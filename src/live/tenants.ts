// Every organization's tenant in this process (tenant.ts): loaded from the database the first time
// the organization is scored, then kept in step by the live tail (src/live/tail.ts), which hands
// every change any process records to the organization it belongs to, in feed order.
// Changes the tail reads during a load are applied once it is done, skipping those the load's
// snapshot already had, so a tenant misses nothing and counts nothing twice. A change a tenant
// cannot place makes it load afresh on its next use; but an import's rows, which are older than
// what a tenant holds (a history is built in time order), leave the tenant in use answering, and
// it is built again in the background once they stop arriving (`rebuild`): the organization's
// scores never wait for a load while its history is imported.
// A large history is loaded from the snapshot of it the database keeps (history-snapshots.ts) and
// the changes since, and writes that snapshot after a load that had many to apply (put aside before
// the tenant is ready, then stored at a pace: snapshot-spill.ts); a tenant in use
// is built again in the background when its snapshot lags or its floor does (`refresh`), so a
// restart finds a recent one (docs/operating.md, "Snapshots of a history").

import { WINDOW_HORIZON_MS } from '../domain/history/horizon.ts';
import { historyBytes, HISTORY_FORMAT } from '../domain/history/snapshot.ts';
import type { Db } from '../storage/db.ts';
import { organizationData } from '../storage/organization-data.ts';
import { seenBy, type FeedChange, type FeedSnapshot } from '../storage/live-feed.ts';
import type { DecisionLog } from './decision-log.ts';
import { storedRings } from './ring-windows.ts';
import { Tenant } from './tenant.ts';
import { putAside, type SnapshotPieces } from '../storage/snapshot-spill.ts';
import type { Loaded } from '../storage/history-load.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unbounded } from '../storage/deadline.ts';

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
/** An import stores its rows a chunk at a time: the tenant is built again once none has arrived
 *  for this long. */
const IMPORT_QUIET_MS = 1_000;

export class Tenants {
  private readonly db: Db;
  private readonly log: DecisionLog;
  private readonly labelDelay: number;
  private readonly clock: () => number;
  private readonly afterLoad: () => void;
  private readonly snapshots: SnapshotPolicy | undefined;
  private readonly onError: (e: unknown) => void;
  private readonly spillDir: string;

  private readonly loaded = new Map<string, Promise<Tenant>>();
  /** Tenants ready for the tail's changes. */
  private readonly ready = new Map<string, Tenant>();
  /** The snapshot each ready tenant was loaded in: the changes it saw are in the tenant already. */
  private readonly loadedIn = new Map<string, FeedSnapshot>();
  /** Changes read by the tail while the organization loads, applied when the load is done. */
  private readonly loading = new Map<string, FeedChange[]>();

  constructor(
    db: Db,
    log: DecisionLog,
    labelDelay: number,
    clock: () => number,
    /** Called once a load is done: it leaves its pages and their rows as garbage, which a full
     *  collection frees and the allocator can hand back (src/addon/memory.ts). */
    afterLoad: () => void = () => {},
    /** When to write snapshots (undefined: never write or read one). */
    snapshots: SnapshotPolicy | undefined = SNAPSHOTS,
    onError: (e: unknown) => void = () => {},
    /** Where snapshots are put aside until stored (snapshot-spill.ts). */
    spillDir = join(tmpdir(), 'fraud-risk-snapshots'),
  ) {
    this.db = db;
    this.log = log;
    this.labelDelay = labelDelay;
    this.clock = clock;
    this.afterLoad = afterLoad;
    this.snapshots = snapshots;
    this.onError = onError;
    this.spillDir = spillDir;
  }

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
      // Shared by every request that waits for it: never bound by the first one's deadline.
      t = unbounded(() => this.load(organizationId, buffer));
      const attempt = t;
      this.loaded.set(organizationId, attempt);
      // A load that failed (the database was down) is tried again by the next request.
      attempt.catch(() => {
        if (this.loaded.get(organizationId) === attempt) this.forget(organizationId);
      });
    }
    return t;
  }

  /** The organization's tenant when it is loaded already (the usual case: nothing to wait for). */
  loadedNow(organizationId: string): Tenant | undefined {
    return this.ready.get(organizationId);
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
        // A rebuild under way reads the import's rows, or reads again for any it did not see (the
        // changes it buffers meanwhile): another after it would only read the same rows again.
        else if (c.kind === 'transaction' && c.source === 'import') {
          if (!this.refreshing.has(c.organization_id)) this.importArrived(c.organization_id);
        }
        // The tenant answers until its history without the customer is built beside it.
        else if (c.kind === 'erasure') void this.rebuild(c.organization_id);
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
  private async build(
    organizationId: string,
    buffer: FeedChange[],
    snapshot: boolean,
    write: boolean,
    ready: (tenant: Tenant, seen: FeedSnapshot) => void,
  ): Promise<Tenant> {
    // What this process has answered but not stored yet belongs in the history too.
    await this.log.flush();
    const data = organizationData(this.db, organizationId);
    let use = snapshot && this.snapshots ? { format: HISTORY_FORMAT, labelDelay: this.labelDelay } : undefined;
    for (;;) {
      const tenant = new Tenant(organizationId, data.transactions, this.labelDelay);
      const loader = tenant.loader();
      let loaded: Loaded;
      try {
        loaded = await data.history.load(this.clock(), loader, tenant.policyLoader(), use);
      } finally {
        loader.close();
      }
      // A change the stored snapshot could not take: from the rows, then.
      if (loaded.restored === false) {
        use = undefined;
        continue;
      }
      const { seen } = loaded;
      tenant.setRings(await storedRings(this.db, organizationId));
      // Put aside now, as the history stands in `seen`, before the changes below move it on.
      // After a load from the rows (or when asked to) a large history is stored; after one from the
      // snapshot, once it had many changes to apply.
      const bySize = write || loaded.restored === undefined;
      const due = this.snapshots && (bySize ? tenant.history.size >= this.snapshots.minTransactions : loaded.restored! >= this.snapshots.rewriteAfter);
      let pieces: SnapshotPieces | undefined;
      if (due) {
        try {
          pieces = await putAside(this.db, this.spillDir, historyBytes(tenant.history));
        } catch (e) {
          // No room on disk: the tenant serves all the same, and the next load writes one.
          this.onError(e);
        }
      }
      // A change that needs a fresh load (an import) means reading again: the next read has
      // everything the buffer had.
      const changes = buffer.splice(0).filter((c) => !seenBy(seen, c.xid));
      if (!changes.every((c) => tenant.applyChange(c))) {
        await pieces?.close();
        continue;
      }
      // What a restart would have to apply to the stored snapshot (`refreshDue`).
      tenant.changes = (pieces ? 0 : (loaded.restored ?? 0)) + changes.length;
      ready(tenant, seen);
      if (pieces) {
        const aside = pieces;
        const meta = {
          format: HISTORY_FORMAT,
          labelDelay: this.labelDelay,
          floor: loaded.floor,
          seen,
          transactions: tenant.history.size,
          writtenAt: Date.now(),
        };
        const stored = data.history
          .writeSnapshot(meta, aside)
          .then(
            () => {},
            (e) => this.onError(e),
          )
          // Their room given back (a copy in memory, on the embedded database: then trimmed).
          .finally(() =>
            aside.close().then(
              () => this.afterLoad(),
              (e: unknown) => this.onError(e),
            ),
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
  /** The refresh running for each organization in `refreshing`. */
  private readonly refreshed = new Map<string, Promise<void>>();
  /** Organizations whose import rows are arriving: the timer that builds their tenant again. */
  private readonly importing = new Map<string, NodeJS.Timeout>();

  /** Imports this process is running, by organization (`holdRebuilds`), and whether their rows
   *  have reached the organization's tenant meanwhile. */
  private readonly held = new Map<string, { imports: number; arrived: boolean }>();

  /** An import of this process is storing the organization's rows: its tenant is not built again
   *  between two of its chunks, however long one waits (background work on the embedded
   *  database), since the import asks for it once its rows are stored (`rebuild`). Returns the
   *  release; rows that arrived meanwhile and were not rebuilt for then start the usual wait. */
  holdRebuilds(organizationId: string): () => void {
    const hold = this.held.get(organizationId) ?? { imports: 0, arrived: false };
    hold.imports++;
    this.held.set(organizationId, hold);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--hold.imports > 0) return;
      this.held.delete(organizationId);
      if (hold.arrived && !this.rebuilding.has(organizationId)) this.importArrived(organizationId);
    };
  }

  /** An import's row reached an organization's tenant, which cannot place it: the tenant keeps
   *  answering, and is built again once the import's rows stop arriving. */
  private importArrived(organizationId: string): void {
    const hold = this.held.get(organizationId);
    if (hold) {
      hold.arrived = true;
      return;
    }
    clearTimeout(this.importing.get(organizationId));
    const timer = setTimeout(() => void this.rebuild(organizationId), IMPORT_QUIET_MS);
    timer.unref();
    this.importing.set(organizationId, timer);
  }

  /**
   * Builds the organization's tenant again from the rows beside the one in use, which keeps
   * answering meanwhile, and puts it in its place (after an import stored rows); resolves once it
   * is there, or at once when this process holds no tenant of the organization (its next use
   * loads one). Never rejects: a build that fails (the database out of reach) drops the tenant,
   * so that the next use loads it, as a tenant that cannot place a change.
   */
  rebuild(organizationId: string): Promise<void> {
    const running = this.rebuildOnce(organizationId);
    this.rebuilding.set(organizationId, running);
    void running.finally(() => {
      if (this.rebuilding.get(organizationId) === running) this.rebuilding.delete(organizationId);
    });
    return running;
  }

  /** Rebuilds asked for (`rebuild`) and not finished, by organization. */
  private readonly rebuilding = new Map<string, Promise<void>>();

  /** Resolves once no rebuild of the organization's tenant is waiting or running (after an import's
   *  rows stopped arriving, or an erasure reached this process). */
  async rebuilt(organizationId: string): Promise<void> {
    for (;;) {
      const running = this.rebuilding.get(organizationId);
      if (running) await running;
      else if (this.importing.has(organizationId)) await new Promise((r) => setTimeout(r, 50));
      else return;
    }
  }

  private async rebuildOnce(organizationId: string): Promise<void> {
    clearTimeout(this.importing.get(organizationId));
    this.importing.delete(organizationId);
    // A refresh begun before the import's last rows may not have read them: this one follows it.
    await this.refreshed.get(organizationId)?.catch(() => {});
    // The rows a held import's chunks brought so far are read by this rebuild: its release asks for
    // another only for rows that reach the tenant after it.
    const hold = this.held.get(organizationId);
    if (hold) hold.arrived = false;
    try {
      await this.refresh(organizationId, true);
    } catch (e) {
      this.forget(organizationId);
      this.onError(e);
    }
  }

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
   * the horizon), or when `fromRows` (after an import, whose rows the stored snapshot lacks). The
   * tail's changes reach both meanwhile. Holds a second copy of the history while it runs. Nothing
   * is replaced if the tenant was dropped meanwhile.
   */
  async refresh(organizationId: string, fromRows = false): Promise<void> {
    const current = this.ready.get(organizationId);
    if (!current || this.refreshing.has(organizationId)) return;
    const buffer: FeedChange[] = [];
    this.refreshing.set(organizationId, buffer);
    const rows = fromRows || current.history.heldFrom < this.clock() - WINDOW_HORIZON_MS - FLOOR_LAG_MS;
    const built = this.build(organizationId, buffer, !rows, true, (tenant, seen) => {
      if (this.ready.get(organizationId) !== current) return;
      this.ready.set(organizationId, tenant);
      this.loadedIn.set(organizationId, seen);
      this.loaded.set(organizationId, Promise.resolve(tenant));
    }).then(() => {});
    this.refreshed.set(organizationId, built);
    try {
      await built;
    } finally {
      this.refreshing.delete(organizationId);
      this.refreshed.delete(organizationId);
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
    for (const timer of this.importing.values()) clearTimeout(timer);
    this.importing.clear();
    await this.refreshingAll;
    await this.settled();
  }
}
