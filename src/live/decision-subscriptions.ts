// Which organizations want decision events, known in this process: for each organization with an
// enabled webhook endpoint subscribed to `decision.review` or `decision.block` (or to a `case.*`
// event a decision's case makes), the types. The decision log's group commit writes a flagged
// payment's event only for them (storage/recorded-group.ts), and opens a case in one statement
// with the insert when nobody waits for its event, so the many organizations with no endpoint pay
// nothing for webhooks. The statement that writes an event still checks the endpoints themselves
// when it commits: this view may only say "no" for an organization that truly has none. It is
// loaded at start, re-read for an organization when a trigger announces a change to its endpoints
// (any process, any writer), read whole again whenever listening restarts (notifications sent
// meanwhile were lost), and while it cannot be read it answers "yes" for everyone.

import type { Db } from '../storage/db.ts';
import { decisionSubscriptions, ENDPOINTS_CHANNEL } from '../storage/webhook-outbox.ts';

/** How long after a failed read the view is read whole again. */
const RETRY_MS = 5_000;

export class DecisionSubscriptions {
  private readonly db: Db;
  private readonly onError: (e: unknown) => void;

  private byOrganization = new Map<string, Set<string>>();
  /** False until the first read succeeds and after any read fails: every organization is asked. */
  private known = false;
  /** Reads run one at a time, in the order asked, so a later read's answer is never overwritten
   *  by an earlier one's. */
  private queue: Promise<void> = Promise.resolve();
  private unlisten: (() => Promise<void>) | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(db: Db, onError: (e: unknown) => void = () => {}) {
    this.db = db;
    this.onError = onError;
  }

  /** Listens for endpoint changes and reads the view whole: both back ends report listening once
   *  it starts, which queues that read; this waits for it. */
  async start(): Promise<void> {
    this.unlisten = await this.db.listen(
      ENDPOINTS_CHANNEL,
      (organizationId) => void this.refresh(organizationId),
      () => void this.refresh(),
    );
    await this.queue;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    await this.unlisten?.();
    await this.queue;
  }

  /** Whether a payment of this organization decided `type` may be an event: false only when it is
   *  known that no enabled endpoint of the organization subscribes to it. */
  wants(organizationId: string, type: string): boolean {
    return !this.known || (this.byOrganization.get(organizationId)?.has(type) ?? false);
  }

  /** Reads one organization's subscriptions again (after a change to its endpoints), or every
   *  organization's; resolves once the view holds what was committed before the call. */
  refresh(organizationId?: string): Promise<void> {
    this.queue = this.queue.then(() => this.read(organizationId));
    return this.queue;
  }

  private async read(organizationId: string | undefined): Promise<void> {
    if (this.stopped) return;
    try {
      const read = await decisionSubscriptions(this.db, organizationId);
      if (organizationId === undefined) {
        this.byOrganization = read;
        this.known = true;
      } else if (read.has(organizationId)) this.byOrganization.set(organizationId, read.get(organizationId)!);
      else this.byOrganization.delete(organizationId);
    } catch (e) {
      // A change may have been missed: ask the database for every organization until a whole read succeeds.
      this.known = false;
      this.onError(e);
      if (!this.stopped && !this.retry) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          void this.refresh();
        }, RETRY_MS);
        this.retry.unref();
      }
    }
  }
}
