// A process's live state, wired in one place: each organization's history in memory (tenants.ts),
// the decision log that stores what they score (decision-log.ts) with which organizations' flagged
// payments are webhook events (decision-subscriptions.ts), this process's tail of the live feed
// (tail.ts), and the weekly ring analyses (ring-windows.ts). What the log commits and what
// the tail reads reach the tenants from here, so no caller outside this layer relays between them.

import { settleAfterLoad } from '../addon/memory.ts';
import type { Db } from '../storage/db.ts';
import { DecisionLog, type Durability } from './decision-log.ts';
import { DecisionSubscriptions } from './decision-subscriptions.ts';
import { RingWindows } from './ring-windows.ts';
import { LiveTail } from './tail.ts';
import { SNAPSHOTS, Tenants, type SnapshotPolicy } from './tenants.ts';

export interface LiveOptions {
  db: Db;
  durability: Durability;
  /** The model's label delay (imported labels are known that long after their transaction). */
  labelDelay: number;
  clock: () => number;
  log: (msg: string) => void;
  /** A ring analysis was queued: the job runner may claim it now. */
  queued: () => void;
  /** When histories are written to the database as snapshots (default SNAPSHOTS; undefined in
   *  the options object: never). */
  snapshots?: SnapshotPolicy | undefined;
  /** Where history snapshots are put aside until stored (default: a directory in the system's
   *  temporary directory). */
  spillDir?: string;
  /** The longest the group commit of scored transactions may wait for the database (the scoring
   *  deadline): past it the rows' outcome is unknown and their requests are answered 503. */
  commitDeadlineSeconds: number;
}

export class Live {
  readonly tenants: Tenants;
  /** Where organizations' scored transactions and decisions are stored (DURABILITY). */
  readonly decisionLog: DecisionLog;
  /** Which organizations' flagged payments may be webhook events; started with the tail. */
  readonly subscriptions: DecisionSubscriptions;
  /** This process's tail of the live feed: what any process records reaches the tenants through it. */
  readonly tail: LiveTail;
  /** Each organization's weekly ring analyses: queued when due, read into the tenants. */
  readonly rings: RingWindows;

  constructor(o: LiveOptions) {
    const { db, log } = o;
    this.subscriptions = new DecisionSubscriptions(db, (e) => log(`could not read the webhook endpoints' subscriptions: ${(e as Error).message}`));
    this.decisionLog = new DecisionLog(
      db,
      o.durability,
      (stored) => {
        this.tenants.apply(stored);
        // Applied: the tail's reads need not bring them back.
        this.tail.appliedHere(stored.map((c) => c.xid));
      },
      (e) => log(`could not store scored transactions: ${(e as Error).message}`),
      (organizationId, type) => this.subscriptions.wants(organizationId, type),
      o.commitDeadlineSeconds,
    );
    this.tenants = new Tenants(
      db,
      this.decisionLog,
      o.labelDelay,
      o.clock,
      settleAfterLoad,
      'snapshots' in o ? o.snapshots : SNAPSHOTS,
      (e) => log(`could not store a history snapshot: ${(e as Error).message}`),
      o.spillDir,
    );
    this.tenants.startRefreshing();
    this.tail = new LiveTail(
      db,
      (changes) => this.tenants.apply(changes),
      (e) => log(`could not read the live feed: ${(e as Error).message}`),
    );
    this.rings = new RingWindows({
      db,
      clock: o.clock,
      labelDelay: o.labelDelay,
      refresh: (id) => this.tenants.refreshRings(id),
      organizations: () => this.tenants.organizations(),
      queued: o.queued,
      onError: (e) => log(`ring windows: ${(e as Error).message}`),
    });
  }

  /** A history import stored rows into an organization's history: its copy in memory, which must
   *  be built in time order, is built again beside the one answering meanwhile (resolves once it
   *  is in place), and its ring windows are looked at again. */
  imported(organizationId: string): Promise<void> {
    void this.rings.imported(organizationId);
    return this.tenants.rebuild(organizationId);
  }

  /** A history import of this process is about to store an organization's rows: no rebuild of its
   *  copy in memory between its chunks (`imported` asks for one at the end). Returns the release. */
  importing(organizationId: string): () => void {
    return this.tenants.holdRebuilds(organizationId);
  }
}
