// One organization's live state in this process (a tenant): its history, rings, rules and lists,
// loaded from the database the first time the organization is scored (Tenants, tenants.ts), then
// kept in step with every change any process records, applied in feed order (`applyChange`).
// Nothing is shared between organizations: the scorer reads only the tenant it is handed.
// A tenant holds what features can reach: the last 31 days of transactions, and before that the
// per-entity totals the database keeps (storage/history-load.ts), so loading costs the same however
// much older history is stored; older evidence is read when a response lists it (`earlier`). A
// change that cannot be placed (older than the floor, an outcome the totals cannot follow, an
// import) answers false, and the tenant is loaded afresh on its next use.

import { setImmediate as turn } from 'node:timers/promises';
import type { History } from '../domain/history/history.ts';
import { restoring } from '../domain/history/snapshot.ts';
import { channelOf, type Transaction } from '../domain/transaction.ts';
import type { Ring } from '../domain/rings.ts';
import { MAX_EVIDENCE, RingIndex, type EarlierEvidence, type ScoreContext, type ScoredEntities } from '../scoring/scorer.ts';
import type { ScoreInput } from '../contract/score.ts';
import type { HistoryLoader, PolicyLoader } from '../storage/history-load.ts';
import { historyTransaction, type HistoryRow } from '../storage/live-rows.ts';
import type { OrganizationTransactions } from '../storage/organization-data.ts';
import type { FeedChange } from '../storage/live-feed.ts';
import { Policy } from './policy.ts';
import { keptHistory } from './kept-history.ts';
import { HistoryThread } from './history-thread.ts';
import type { Decision, DecisionValues } from '../domain/rules/decide.ts';
import type { FieldState } from '../domain/fields.ts';

/** Rows a load hands to a history at a time; after each step, the time is looked at. */
const LOAD_STEP = 256;
/** The longest a load holds the event loop before a turn (the scores of other organizations wait
 *  that long at most). How many rows fit depends on the history's size and the machine: measured,
 *  not assumed. */
const LOAD_SLICE_MS = 4;

/** A load of at least this many transactions builds the history on a thread of its own
 *  (history-thread.ts): below it, starting the thread costs more than the build. */
const THREAD_FROM = 20_000;

/** Runs a generator's steps (each short), with a turn of the event loop whenever LOAD_SLICE_MS
 *  have passed since the last; returns its value. */
async function inSteps<T>(steps: Generator<unknown, T>): Promise<T> {
  let since = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) {
      await turn();
      return step.value;
    }
    if (performance.now() - since >= LOAD_SLICE_MS) {
      await turn();
      since = performance.now();
    }
  }
}

/** `work(from, to)` over [0, n), LOAD_STEP rows at a time (`inSteps`). */
function inSlices(n: number, work: (from: number, to: number) => void): Promise<void> {
  return inSteps(
    (function* () {
      for (let from = 0; from < n; from += LOAD_STEP) {
        work(from, Math.min(n, from + LOAD_STEP));
        yield;
      }
    })(),
  );
}

/** What makes a request with a known transaction id a retry rather than a different transaction. */
export type TransactionIdentity = Pick<ScoreInput, 'amount' | 'customer_id' | 'merchant_id'>;

/** A retry carries the recorded transaction's amount, customer and merchant. */
export function sameTransaction(recorded: TransactionIdentity, input: TransactionIdentity): boolean {
  return recorded.amount === input.amount && recorded.customer_id === input.customer_id && recorded.merchant_id === input.merchant_id;
}

export class Tenant {
  readonly organizationId: string;
  readonly stored: OrganizationTransactions;
  private readonly threadFrom: number;

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
    organizationId: string,
    /** The organization's stored transactions (its own only): evidence from before the floor, and a
     *  recorded transaction or response read back. */
    stored: OrganizationTransactions,
    labelDelay: number,
    /** Histories of at least this many transactions are built on a thread of their own. */
    threadFrom = THREAD_FROM,
  ) {
    this.organizationId = organizationId;
    this.threadFrom = threadFrom;
    this.stored = stored;
    this.history = keptHistory(labelDelay);
    this.context = { history: this.history, rings: new RingIndex([]), rules: this.policy };
  }

  private setHistory(h: History): void {
    this.history = h;
    this.context.history = h;
  }

  /** What `OrganizationData.history.load` hands over, into this tenant's history. From
   *  `threadFrom` transactions on it is built on a thread of its own (history-thread.ts), and this
   *  thread only hands the pages over; a smaller one is built here, a few thousand rows at a time
   *  with a turn of the event loop between them, so other organizations' requests are answered
   *  meanwhile either way. `close` ends the thread of a load that stopped early. */
  loader(): HistoryLoader & { close(): void } {
    let h = this.history;
    let thread: HistoryThread | undefined;
    type Build = Pick<HistoryLoader, 'uses' | 'transactions' | 'labels' | 'finish'>;
    const here: Build = {
      uses: (page) => inSlices(page.count, (from, to) => h.loadUseColumns(page, from, to)),
      transactions: (page) => inSlices(page.count, (from, to) => h.addColumns(page, from, to)),
      labels: async (rows) => {
        // The rows are filed first (a label of an earlier transaction may reach their customers).
        await inSteps(h.placing());
        await inSlices(rows.length, (from, to) => {
          for (let i = from; i < to; i++) h.loadLabel(rows[i]!, rows[i]!.label, rows[i]!.known);
        });
      },
      finish: (totals) => {
        // Only a load read on other threads (`rowsAt`) finishes without totals, and it finishes there.
        if (!totals) throw new Error('a history built here needs the totals');
        return inSteps(h.finishing(totals));
      },
    };
    let build = here;
    return {
      elsewhereFrom: this.threadFrom,
      // Its threads started while the load counts its rows (PostgreSQL: one reads them).
      prepare: () => void (thread ??= new HistoryThread(h.labelDelay, true)),
      start: (floor, expected) => {
        if (expected >= this.threadFrom) {
          const t = (thread ??= new HistoryThread(h.labelDelay));
          t.start(floor, expected);
          build = {
            uses: (page) => t.uses(page),
            transactions: (page) => t.transactions(page),
            labels: (rows) => t.labels(rows),
            finish: async (totals) => this.setHistory((h = await t.finish(totals))),
          };
          return;
        }
        h.reserve(expected);
        h.loadFrom(floor);
      },
      restore: async (pieces, changes) => {
        let restored: History;
        try {
          restored = await inSteps(restoring(pieces));
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
      // A history built on its thread reads its rows there too (PostgreSQL).
      rowsAt: async (share, organizationId, floor) => {
        if (!thread) return false;
        await thread.rows(await share(), organizationId, floor);
        return true;
      },
      uses: (page) => build.uses(page),
      transactions: (page) => build.transactions(page),
      labels: (rows) => build.labels(rows),
      finish: (totals) => build.finish(totals),
      close: () => thread?.close(),
    };
  }

  /** What `OrganizationData.history.load` hands over of the rules and lists, into this tenant. */
  policyLoader(): PolicyLoader {
    return {
      rules: (states) => {
        for (const s of states) this.policy.setRule(s);
      },
      stays: (stays) => {
        for (const s of stays) this.policy.applyStay(s);
      },
      fields: (states) => {
        for (const s of states) this.policy.setField(s);
      },
      inboxes: (states) => {
        for (const s of states) this.policy.setInbox(s);
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
      const rows = await this.stored.earlier(role, entities, h.heldSince(role, key), MAX_EVIDENCE);
      (out ??= {})[role] = rows.filter((r) => !this.has(r.transaction_id)).slice(0, missing);
    }
    return out;
  }

  /** Adds a transaction to the history (one older than its newest is placed by its time). */
  add(tx: Transaction & { transaction_id: string }): void {
    this.history.add(tx);
  }

  addStored(r: HistoryRow): void {
    this.add(historyTransaction(r));
  }

  setRings(rings: Ring[]): void {
    this.context.rings = new RingIndex(rings);
  }

  /** The fields the organization declares now, by name. */
  /** The inbox a decision goes to and the entity of its case (live/policy.ts Policy.route). */
  routeCase(values: DecisionValues, decision: Decision, features: () => Map<string, number>): ReturnType<Policy['route']> {
    return this.policy.route(values, decision, features);
  }

  declaredFields(): ReadonlyMap<string, FieldState> {
    return this.policy.fields;
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
    if (c.kind === 'field') {
      this.policy.setField(c.field);
      return true;
    }
    if (c.kind === 'inbox') {
      this.policy.setInbox(c.inbox);
      return true;
    }
    // A customer erased: only a history built again from what is left is without them.
    if (c.kind === 'erasure') return false;
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
