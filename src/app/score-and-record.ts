// Scoring an organization's transaction and recording it (POST /api/v1/risk/score): the one owner of
// what makes that safe to retry. The score reads the organization's own history (live/tenants.ts)
// and the transaction joins it with the decision that was answered (live/decision-log.ts).
// Idempotency: a `transaction_id` is unique within the organization. The same id with the same
// amount, customer and merchant is a retry, answered with the stored response (`replayed`) and
// nothing recorded twice; with other values it is `duplicate_transaction`. In this process a copy
// of an id still being committed is waited for first, and from those checks to queueing the row
// nothing awaits, so a concurrent copy here sees it. Across processes the database's unique
// constraint decides, and the process that lost answers with the winner's stored response.
// Durability: with `commit` (the default) the answer waits for the row's commit and every process's
// history gets it from the live feed; with `write_behind` this process's history has it at once
// and the row is stored within milliseconds.
// An organization's first score in a process waits for its history's load only until the request's
// deadline: past it, 503 `history_loading` with Retry-After, nothing scored or stored, and the load
// goes on for the retry.

import { AppError, available, modelUnavailable } from './errors.ts';
import type { ModelBundle, ModelProblem } from '../model/bundle-types.ts';
import { sameTransaction } from '../live/tenant.ts';
import { requestsAtWork } from '../live/requests-at-work.ts';
import type { DecisionLog } from '../live/decision-log.ts';
import { recorded, scoredEntities, type ScoredToRecord, type Scorer } from '../scoring/scorer.ts';
import type { ScoreInput } from '../contract/score.ts';
import type { NewTransaction, ShadowScore } from '../storage/live-rows.ts';
import { beforeDeadline, DeadlinePassed } from '../storage/deadline.ts';
import type { Tenant } from '../live/tenant.ts';
import { Stopwatch } from '../domain/stopwatch.ts';
import { checkDeclared, refuseForbidden, sentFields } from './sent-fields.ts';
import { keyEntries } from '../domain/fields.ts';
import { casePriority } from '../domain/cases.ts';

const HOUR_MS = 3_600_000;

/** The API key a request authenticated with, as far as scoring needs it. */
export interface ScoringKey {
  id: string;
  organization_id: string;
  active_model_id: string | null;
  /** The organization's challengers: scored in shadow, recorded, never answered. */
  challenger_model_ids?: readonly string[];
}

/** The scorer of an organization's active custom model, with a note when the built-in model
 *  scores instead; undefined without a model. */
export type ScorerFor = (modelId: string) => Promise<{ scorer: Scorer; note?: string } | undefined>;

/** The scorers of the models `ids` that can be used as they are (a model that cannot be loaded,
 *  or was made for another base model, is left out): an organization's challengers. */
export async function usableScorers(scorerFor: ScorerFor, ids: readonly string[]): Promise<{ id: string; scorer: Scorer }[]> {
  const found = await Promise.all(ids.map(async (id) => ({ id, made: await scorerFor(id) })));
  return found.flatMap(({ id, made }) => (made && !made.note ? [{ id, scorer: made.scorer }] : []));
}

/** What a score reads and writes of its organization in this process (live/tenant.ts's Tenant). */
export type ScoringTenant = Pick<Tenant, 'earlier' | 'has' | 'sameAs' | 'context' | 'add' | 'declaredFields' | 'routeCase'> & {
  stored: Pick<Tenant['stored'], 'response' | 'get'>;
};

export interface ScoreAndRecordDeps {
  /** The loaded model, or why there is none. */
  model: ModelBundle | ModelProblem;
  /** The organizations this process holds (live/tenants.ts): one at once when loaded, else loading. */
  tenants: { loadedNow(organizationId: string): ScoringTenant | undefined; get(organizationId: string): Promise<ScoringTenant> };
  /** Where a score is recorded (live/decision-log.ts). */
  decisionLog: Pick<DecisionLog, 'durability' | 'inFlight' | 'pendingResponse' | 'push' | 'commit'>;
  /** The built-in model's scorer; undefined when no model is loaded. */
  scorer: Scorer | undefined;
  scorerFor: ScorerFor;
}

/** The answer's JSON text, exactly as stored, whether it is a stored answer sent again, and where
 *  its time went (a new answer only). */
export interface RecordedAnswer {
  body: string;
  replayed: boolean;
  /** A new answer's phases: `prepare` (reading what it needs of the organization: its history on
   *  first use, older evidence), `score` (every stage of the answer's `stages`), `serialize` (the
   *  answer as JSON), `commit` (waiting for it). */
  timing?: Stopwatch;
}

function duplicate(id: string, why: string): AppError {
  return new AppError(
    'duplicate_transaction',
    `Transaction ${id} is already recorded ${why}.`,
    'Send a retry with exactly the same amount, customer_id and merchant_id to get the stored decision back, or use a new transaction_id for a new transaction.',
  );
}

const DIFFERENT = 'with a different amount, customer_id or merchant_id';

/** The stored answer to a retry, or `duplicate_transaction` for an imported id, which has no
 *  decision to return. */
function replay(body: string | null | undefined, id: string): RecordedAnswer {
  if (body === undefined || body === null) throw duplicate(id, 'by a history import, so there is no decision to return');
  return { body, replayed: true };
}

/** The row the decision log stores for a scored transaction: the transaction, the answer (`body`,
 *  its JSON text) and what its decision saw and did. */
export function recordedRow(scored: ScoredToRecord, body: string, challengers: readonly ShadowScore[] = []): NewTransaction {
  const { result, transaction: tx, rules } = scored;
  return {
    transaction_id: tx.transaction_id,
    time: tx.time,
    amount: tx.amount,
    customer_id: tx.customer_id,
    merchant_id: tx.merchant_id,
    location: tx.location,
    payment_type: tx.payment_type,
    source: 'scored',
    decision: result,
    response: body,
    features: scored.features,
    decided: {
      model_id: result.model_id,
      model_decision: scored.modelDecision,
      rule_action: rules?.action ?? null,
      rule_ids: rules ? rules.matches.map((m) => m.id) : [],
      rule_errors: rules ? rules.errors.map((e) => e.id) : [],
      inputs: scored.values,
      challengers: challengers.length ? challengers : null,
    },
  };
}

/** Seconds a score refused while its organization's history loads says to wait (Retry-After). */
export const HISTORY_LOADING_RETRY_SECONDS = 2;

/** The organization's tenant, once loaded, if that is before the request's deadline. */
async function inTime(loading: Promise<ScoringTenant>): Promise<ScoringTenant> {
  try {
    return await beforeDeadline(loading, "the organization's history");
  } catch (e) {
    // The load failed (the database): answered as such. The deadline passed: the load goes on.
    if (!(e instanceof DeadlinePassed)) throw e;
    throw new AppError(
      'history_loading',
      "This organization's history is being loaded into this server process (its first score since the process started, or since an import), which takes longer than a score may wait; the load goes on, and nothing was scored or stored.",
      `Send the same request again after ${HISTORY_LOADING_RETRY_SECONDS} s (Retry-After); once the history is loaded, scores are answered at once.`,
      { retry_after_seconds: HISTORY_LOADING_RETRY_SECONDS },
    );
  }
}

export class ScoreAndRecord {
  private readonly deps: ScoreAndRecordDeps;

  constructor(deps: ScoreAndRecordDeps) {
    this.deps = deps;
  }

  /** What each challenger makes of the transaction the active model scored: recorded, never answered. */
  private shadows(challengers: readonly { id: string; scorer: Scorer }[], scored: ScoredToRecord, by: Scorer): ShadowScore[] {
    const out: ShadowScore[] = [];
    for (const c of challengers) {
      const s = c.scorer.shadow(scored, by);
      if (s) out.push({ model_id: c.id, risk_score: s.risk_score, decision: s.decision });
    }
    return out;
  }

  async score(key: ScoringKey, input: ScoreInput): Promise<RecordedAnswer> {
    const timing = new Stopwatch();
    const fields = sentFields(input.fields);
    refuseForbidden(fields);
    const { tenants, decisionLog: log } = this.deps;
    // The organization's active custom model, if it has one; else the built-in model.
    const custom = key.active_model_id ? await this.deps.scorerFor(key.active_model_id) : undefined;
    available(this.deps.model);
    const scorer = custom?.scorer ?? this.deps.scorer;
    if (!scorer) throw modelUnavailable();
    const challengers = key.challenger_model_ids?.length ? await usableScorers(this.deps.scorerFor, key.challenger_model_ids) : [];
    const organizationId = key.organization_id;
    // A request waiting for its organization's history is not at work meanwhile: the load it waits
    // for holds its reads back while requests are (live/requests-at-work.ts).
    const tenant = tenants.loadedNow(organizationId) ?? (await requestsAtWork.parked(inTime(tenants.get(organizationId))));
    const declared = tenant.declaredFields();
    const fieldsNote = checkDeclared(fields, declared);
    const keys = keyEntries(fields, declared.values());
    // Evidence older than what the tenant holds (its last 31 days), read now: nothing below awaits.
    const earlier = await tenant.earlier(scoredEntities(input));
    const id = input.transaction_id;
    if (id !== undefined) {
      // A copy of this id being committed by this process: its outcome decides what this one is.
      for (let first = log.inFlight(organizationId, id); first; first = log.inFlight(organizationId, id)) {
        await beforeDeadline(
          first.catch(() => {}),
          'the commit of an earlier copy of this transaction',
        );
      }
      if (tenant.has(id)) {
        if (!tenant.sameAs(id, input)) throw duplicate(id, DIFFERENT);
        return replay(log.pendingResponse(organizationId, id) ?? (await tenant.stored.response(id)), id);
      }
    }
    // From the checks above to queueing the row, nothing awaits: a concurrent copy of this id in
    // this process sees it.
    timing.lap('prepare');
    const scored = scorer.scoreToRecord(input, { ...tenant.context, earlier, keys });
    timing.lap('score');
    const { result, transaction: tx } = scored;
    if (keys) tx.keys = keys;
    const writeBehind = log.durability === 'write_behind';
    // Write-behind: this process's history has it at once. Commit: every process's history gets it
    // from the live feed once it is committed, this one's before the answer is sent.
    if (writeBehind) tenant.add(tx);
    recorded(scored);
    if (custom?.note) result.notes.push(custom.note);
    if (fieldsNote) result.notes.push(fieldsNote);
    const body = JSON.stringify(result);
    timing.lap('serialize');
    const row = recordedRow(scored, body, this.shadows(challengers, scored, scorer));
    if (fields) {
      row.fields = fields;
      row.field_keys = keys;
    }
    const routed = tenant.routeCase(scored.values, result.decision, () => scorer.namedFeatures(scored.features));
    if (routed)
      row.case_join = {
        inbox_id: routed.inbox.id,
        entity_kind: routed.kind,
        entity_key: routed.key,
        transaction_id: tx.transaction_id,
        priority: casePriority(result.risk_score, tx.amount),
        at: tx.time,
        due: tx.time + routed.inbox.sla_hours * HOUR_MS,
        actor: 'system',
        reason: `decision ${result.decision}`,
        assigns: routed.inbox.auto_assign,
      };
    if (writeBehind) log.push(organizationId, row);
    // Past the request's deadline the commit's outcome is not known yet: answered 503, never 200; a
    // retry with the same id answers the stored decision or stores it.
    else if (!(await beforeDeadline(log.commit(organizationId, row), 'the commit of this score'))) {
      // Another process recorded this id first: answer as a retry of the one it stored.
      const stored = await tenant.stored.get(tx.transaction_id);
      if (!stored || !sameTransaction(stored, tx)) throw duplicate(tx.transaction_id, DIFFERENT);
      return replay(stored.response, tx.transaction_id);
    }
    timing.lap('commit');
    return { body, replayed: false, timing };
  }
}
