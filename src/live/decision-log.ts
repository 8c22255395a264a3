// The decision log's writer: every transaction an organization scores is stored with the decision
// it was answered and the exact response body, written behind the response in batches (one
// statement per organization every few milliseconds) so that scoring never waits for the database.
// Until a batch is stored, its response bodies are kept here, so that an idempotent replay can be
// answered at once. `flush()` stores what is pending; anything that reads the log from the database
// (a record, a listing, an outcome) flushes first, so a caller always reads what it was answered.
// A crash can lose at most the last interval of decisions (25 ms by default).

import type { Db } from '../storage/db.ts';
import { organizationData, type NewTransaction } from '../storage/live-store.ts';

interface Pending {
  organizationId: string;
  row: NewTransaction;
}

export class DecisionLog {
  private pending: Pending[] = [];
  private readonly bodies = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly intervalMs = 25,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  push(organizationId: string, row: NewTransaction): void {
    this.pending.push({ organizationId, row });
    if (row.response) this.bodies.set(key(organizationId, row.transaction_id), row.response);
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** The response body of a scored transaction not stored yet. */
  pendingResponse(organizationId: string, transactionId: string): string | undefined {
    return this.bodies.get(key(organizationId, transactionId));
  }

  /** Stores everything pending; resolves when it is stored (or kept for the next try). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return;
      const byOrganization = new Map<string, NewTransaction[]>();
      for (const p of batch) {
        const rows = byOrganization.get(p.organizationId);
        if (rows) rows.push(p.row);
        else byOrganization.set(p.organizationId, [p.row]);
      }
      for (const [organizationId, rows] of byOrganization) {
        try {
          await organizationData(this.db, organizationId).insert(rows);
          for (const r of rows) this.bodies.delete(key(organizationId, r.transaction_id));
        } catch (e) {
          // Kept for the next flush rather than lost.
          this.pending.unshift(...rows.map((row) => ({ organizationId, row })));
          this.timer ??= setTimeout(() => void this.flush(), Math.max(this.intervalMs, 1000));
          this.onError(e);
        }
      }
    });
    return this.flushing;
  }
}

function key(organizationId: string, transactionId: string): string {
  return `${organizationId}\0${transactionId}`;
}
