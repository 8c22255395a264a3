// Each organization's live history in this process: loaded from the database the first time the
// organization is scored or reports an outcome, then kept up to date by what this process records
// (scored transactions, outcomes). Nothing here is shared between organizations: a tenant holds one
// organization's transactions, the ids it has used (what makes a retry a replay), its rings and its
// outcomes, and the scorer reads only the tenant it is handed.

import { History, type HistoryTransaction } from '../engine/history.ts';
import { detectRings, type Ring } from '../engine/rings.ts';
import { RingIndex, type ScoreContext, type ScoreInput } from '../scoring/scorer.ts';
import type { Db } from '../storage/db.ts';
import { organizationData, type HistoryRow, type OrganizationData } from '../storage/live-store.ts';
import type { DecisionLog } from './decision-log.ts';

export class Tenant {
  readonly history: History;
  /** Transaction id → index among the history's records. */
  private readonly ids = new Map<string, number>();
  /** Outcome changes run one at a time, so memory applies them in the order the database did. */
  private outcomes: Promise<unknown> = Promise.resolve();
  /** What this organization's requests are scored against: its history and its rings. A request
   *  that records adds its own `record` (routes/v1.ts). */
  readonly context: ScoreContext;

  constructor(
    readonly organizationId: string,
    readonly data: OrganizationData,
    labelDelay: number,
    expected: number,
  ) {
    this.history = new History(labelDelay).withRecords(expected);
    this.context = { history: this.history, rings: new RingIndex([]) };
  }

  /** Adds a transaction (in time order) to the history. */
  add(tx: HistoryTransaction & { transaction_id: string }): void {
    this.ids.set(tx.transaction_id, this.history.add(tx));
  }

  addStored(r: HistoryRow): void {
    const tx: HistoryTransaction & { transaction_id: string } = {
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
    return this.ids.has(transactionId);
  }

  /** Whether a request is the same transaction as the recorded one with its id: same amount,
   *  customer and merchant. */
  sameAs(transactionId: string, input: Pick<ScoreInput, 'amount' | 'customer_id' | 'merchant_id'>): boolean {
    const k = this.ids.get(transactionId)!;
    const r = this.history.transactions;
    return r.amount(k) === input.amount && r.customerId(k) === input.customer_id && r.merchantId(k) === input.merchant_id;
  }

  /** Applies an outcome the database has stored: features see it from `knownAt` on. */
  applyOutcome(transactionId: string, label: 0 | 1, knownAt: number): void {
    const k = this.ids.get(transactionId);
    if (k !== undefined) this.history.setOutcome(k, label, knownAt);
  }

  /** Runs outcome changes one after another. */
  serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.outcomes.then(fn, fn);
    this.outcomes = run.catch(() => {});
    return run;
  }
}

export class Tenants {
  private readonly loaded = new Map<string, Promise<Tenant>>();

  constructor(
    private readonly db: Db,
    private readonly log: DecisionLog,
    private readonly labelDelay: number,
    private readonly clock: () => number,
  ) {}

  /** The organization's tenant, loaded on first use. */
  get(organizationId: string): Promise<Tenant> {
    let t = this.loaded.get(organizationId);
    if (!t) {
      t = this.load(organizationId);
      this.loaded.set(organizationId, t);
      // A load that failed (the database was down) is tried again by the next request.
      t.catch(() => this.loaded.delete(organizationId));
    }
    return t;
  }

  /** Drops the organization's tenant, so that the next use loads it again (after an import). */
  forget(organizationId: string): void {
    this.loaded.delete(organizationId);
  }

  get size(): number {
    return this.loaded.size;
  }

  private async load(organizationId: string): Promise<Tenant> {
    // What this process has answered but not stored yet belongs in the history too.
    await this.log.flush();
    const data = organizationData(this.db, organizationId);
    const tenant = new Tenant(organizationId, data, this.labelDelay, await data.count());
    await data.forEachHistoryPage((rows) => {
      for (const r of rows) tenant.addStored(r);
    });
    tenant.setRings(detectRings(tenant.history.transactions, this.clock(), { labelDelay: this.labelDelay }));
    return tenant;
  }
}
