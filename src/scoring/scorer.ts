// Scoring one transaction: the single owner of what a score response contains. It reads a history
// (strictly older transactions only): an organization's, or the public sandbox's; takes the
// transaction through the pipeline's steps that batch scoring takes too (pipeline.ts: priors, the
// four channels' features with the same code as training, the boosters evaluated natively, stacked
// and calibrated with the cold-start floor), runs the organization's rules, explains with exact
// TreeSHAP, gathers entity history, graph evidence and a related ring. Every stage that runs is timed and reported. It
// records nothing itself: `scoreToRecord` also returns the transaction and its features, which the
// caller records (app/score-and-record.ts). A scorer belongs to a model, not to a history: the
// context says whose data it reads.
// Channel scores and attribution (the specification leaves their exact meaning to us, docs/integrating.md):
// - channel_scores[c]: the calibrated probability with channel c's evidence and every other channel
//   at its average (its booster's expected value): what this channel alone says.
// - channel_attribution[c]: w_c · (raw_c − expected_c), each channel's share of how far the stacked
//   log-odds moved from the average, signed, divided by the sum of their absolute values.

import { randomUUID } from 'node:crypto';
import type { History } from '../domain/history/history.ts';
import { channelOf, UNKNOWN, type EarlierTransaction, type Transaction, type TransactionEntities } from '../domain/transaction.ts';
import { allocateFeatures, type ChannelMatrices } from '../domain/features/extract.ts';
import { sameFeatures, storedFeatures } from './stored-features.ts';
import type { Ring } from '../domain/rings.ts';
import type { ModelBundle, ModeName } from '../model/bundle-types.ts';
import { topReasons, type ChannelExplanation, type ScoreReason } from './explain.ts';
import { isoTime } from '../domain/iso-time.ts';
import { featureMap, type Decision, type DecisionValues } from '../domain/rules/decide.ts';
import { runRules, rulesNotes, type RuleSet, type RulesOutcome } from './rules-stage.ts';
import { KnownValues } from './known-values.ts';
import { ScoringPipeline } from './pipeline.ts';
import { decisionOf } from '../model/combine.ts';
import { Stopwatch } from '../domain/stopwatch.ts';
import type { ScoreInput, ScoreResponse } from '../contract/score.ts';

/** One earlier transaction the answer lists as evidence, and the ring its merchant or channel
 *  belongs to: the answer's parts, as the contract defines them. */
export type Evidence = ScoreResponse['graph_evidence'][string][number];
export type RelatedRing = NonNullable<ScoreResponse['related_ring']>;

/** The entities a request's transaction belongs to: a missing location or payment type is
 *  recorded as "unknown" (the notes say so). */
export type ScoredEntities = TransactionEntities;

export function scoredEntities(input: Pick<ScoreInput, 'customer_id' | 'merchant_id' | 'location' | 'payment_type'>): ScoredEntities {
  return { customer_id: input.customer_id, merchant_id: input.merchant_id, location: input.location ?? UNKNOWN, payment_type: input.payment_type ?? UNKNOWN };
}

/** Per role, the entity's newest earlier transactions beyond those the history holds. */
export type EarlierEvidence = Partial<Record<'customer' | 'merchant' | 'channel', readonly EarlierTransaction[]>>;

/** Reasons kept per response, and earlier transactions listed per entity. */
export const MAX_REASONS = 5;
export const MAX_EVIDENCE = 5;

// Hot-path helpers are module-level functions rather than closures made per call: cheaper.

/** Adds `value` under `key`; if two entities share an identifier (a customer id equal to a merchant
 *  id), the later role is suffixed so that no entry is lost. */
function put<T>(obj: Record<string, T>, key: string, value: T, role: string): void {
  obj[key in obj ? `${key} (${role})` : key] = value;
}

function relatedRing(ring: Ring | undefined, matched: string, role: 'merchant' | 'channel', now: number): RelatedRing | null {
  return ring && ring.published_at <= now
    ? {
        ring_id: ring.ring_id,
        window_start: new Date(ring.window_start).toISOString(),
        window_end: new Date(ring.window_end).toISOString(),
        matched_entity: matched,
        role,
        members: ring.members,
        fraud_rate: ring.fraud_rate,
      }
    : null;
}

const RELATION = { customer: 'same_customer', merchant: 'same_merchant', channel: 'same_channel' } as const;

/** The entity's most recent earlier transactions as graph evidence, with each outcome as known at
 *  `time` (a label counts only from when it became known). */
function addEvidence(
  evidence: ScoreResponse['graph_evidence'],
  history: History,
  role: 'customer' | 'merchant' | 'channel',
  key: string,
  time: number,
  older: readonly EarlierTransaction[] | undefined,
): void {
  const earlier = history.recentIndices(role, key, time, MAX_EVIDENCE);
  if (earlier.length === 0 && !older?.length) return;
  const records = history.transactions;
  const list: Evidence[] = [];
  for (const k of earlier) {
    const at = records.time(k);
    const label = records.label(k);
    const known = label !== undefined && records.labelKnownAt(k) < time;
    list.push({
      transaction_id: records.transactionId(k) ?? '',
      time: isoTime(at),
      amount: records.amount(k),
      source: records.customerId(k),
      target: records.merchantId(k),
      relation: RELATION[role],
      outcome: !known ? 'unknown' : label === 1 ? 'fraud' : 'legit',
    });
  }
  // Then those before the history's floor, older than every one it holds.
  for (const r of older ?? []) {
    if (list.length >= MAX_EVIDENCE) break;
    const known = r.label !== null && r.label_known_ms! < time;
    list.push({
      transaction_id: r.transaction_id,
      time: isoTime(r.time),
      amount: r.amount,
      source: r.customer_id,
      target: r.merchant_id,
      relation: RELATION[role],
      outcome: !known ? 'unknown' : r.label === 1 ? 'fraud' : 'legit',
    });
  }
  put(evidence, key, list, role);
}

/** Flagged rings looked up by merchant and by main channel, newest window first. */
export class RingIndex {
  readonly rings: readonly Ring[];

  private readonly byMerchant = new Map<string, Ring>();
  private readonly byChannel = new Map<string, Ring>();

  constructor(rings: readonly Ring[]) {
    this.rings = rings;
    for (const r of [...rings].sort((a, b) => a.window_end - b.window_end)) {
      for (const m of r.merchants) this.byMerchant.set(m, r);
      if (r.channels[0]) this.byChannel.set(r.channels[0], r);
    }
  }

  /** A ring published before `now` that the merchant (first) or channel belongs to. */
  related(merchant: string, channel: string, now: number): RelatedRing | null {
    return relatedRing(this.byMerchant.get(merchant), merchant, 'merchant', now) ?? relatedRing(this.byChannel.get(channel), channel, 'channel', now);
  }
}

export interface ScorerDeps {
  bundle: ModelBundle;
  clock?: () => number;
}

/** Whose data a score reads, when it is made, and whether it is recorded. */
export interface ScoreContext {
  history: History;
  rings: RingIndex;
  /** The transaction's time (epoch ms); default: now, never before the history's newest. */
  at?: number;
  /** Notes that come first in the response (what the context means). */
  notes?: readonly string[];
  /** Evidence the history holds only in totals, read beforehand (Tenant.earlier). */
  earlier?: EarlierEvidence | undefined;
  /** The organization's rules: evaluated after the model (an organization's scores only). */
  rules?: RuleSet;
  /** The payment's key field values (`name=value`, domain/fields.ts keyEntries): their histories
   *  are answered in `field_history` and read by rules (an organization's scores only). */
  keys?: readonly string[] | undefined;
}

export class Scorer {
  private readonly deps: ScorerDeps;

  private readonly clock: () => number;
  private readonly pipeline: ScoringPipeline;
  /** One transaction's features and each channel's SHAP values, reused by every call: a score
   *  reads them only while it runs (scoring is synchronous), and eight small typed arrays per
   *  request would be eight native allocations for the collector to find and free. */
  private readonly features: ChannelMatrices = allocateFeatures(1);
  private readonly phi: Float64Array[];
  /** Each channel's part of the explanation over those buffers (names, stack weight, values, SHAP). */
  private readonly explained: ChannelExplanation[];
  /** Each channel's feature names, in the model's order (the rules' `features` map). */
  private readonly featureNames: readonly (readonly string[])[];
  /** The payment types and locations the model knows: a value it does not is named in the notes. */
  readonly known: KnownValues;

  constructor(deps: ScorerDeps) {
    this.deps = deps;
    this.clock = deps.clock ?? Date.now;
    this.pipeline = new ScoringPipeline(deps.bundle);
    const { channels, file } = deps.bundle;
    this.featureNames = channels.map((c) => c.features);
    this.phi = channels.map((c) => new Float64Array(c.features.length + 1));
    this.explained = channels.map((c, k) => ({ features: c.features, weight: file.stack.weights[c.name], values: this.features[c.name], phi: this.phi[k]! }));
    this.known = new KnownValues(deps.bundle);
  }

  get bundle(): ModelBundle {
    return this.deps.bundle;
  }

  get modelId(): string {
    return this.deps.bundle.file.id;
  }

  /** Scores a transaction and returns the answer; reads the context, changes nothing. */
  score(input: ScoreInput, context: ScoreContext): ScoreResponse {
    return this.run(input, context).result;
  }

  /**
   * Scores a transaction that is to be recorded: the answer, the transaction as the history will
   * hold it, and the features it was scored with (every channel's, in the model's order), which the
   * caller records. The answer's `record` stage is still open: `recorded` closes it.
   */
  scoreToRecord(input: ScoreInput, context: ScoreContext): ScoredToRecord {
    const scored = this.run(input, context);
    // Copied out of the buffers the next score reuses; part of the `record` stage.
    return { ...scored, features: storedFeatures(this.deps.bundle.channels, this.features) };
  }

  /** The features `scoreToRecord` returned, by name (a missing value left out), as rules read them. */
  namedFeatures(features: Float32Array): Map<string, number> {
    let at = 0;
    return featureMap(
      this.featureNames,
      this.deps.bundle.channels.map((c) => features.subarray(at, (at += c.features.length))),
    );
  }

  /**
   * This model's score of a transaction another model scored to record (`scored`), for a
   * challenger in shadow: its risk score and its model's decision (the organization's rules are
   * the same for both, so they are left to the comparison). The same features, never computed
   * again; with the same boosters, the same margins too, and only the stack, calibration and
   * thresholds differ; undefined when this model reads other features than the one that scored.
   */
  shadow(scored: ScoredToRecord, by: Scorer): { risk_score: number; decision: Decision } | undefined {
    const mine = this.deps.bundle.channels;
    const theirs = by.bundle.channels;
    if (!sameFeatures(this.deps.bundle, by.bundle)) return undefined;
    let raw = scored.raw;
    if (mine.some((c, k) => c.engine !== theirs[k]!.engine)) {
      let at = 0;
      raw = mine.map((c) => {
        const values = this.features[c.name];
        for (let i = 0; i < c.features.length; i++) values[i] = scored.features[at + i]!;
        at += c.features.length;
        return c.engine.predictRaw(values);
      });
    }
    const combined = this.pipeline.combined(raw, scored.cold, scored.mode);
    return { risk_score: combined.risk, decision: combined.decision };
  }

  /**
   * This model's scores of `n` recorded transactions from their stored features (`rows`, each every
   * channel's in the model's order, one after the other), in `mode`: each one's risk score and its
   * model's decision, as the answer would have given them (without the organization's rules, as a
   * challenger's `shadow`). A challenger's backtest over the imported span scores with it.
   */
  scoreStored(rows: Float32Array, n: number, mode: ModeName): { risk: Float64Array; decisions: Decision[] } {
    const { risk, codes } = this.pipeline.storedScores(rows, n, mode);
    return { risk, decisions: Array.from(codes, decisionOf) };
  }

  private run(input: ScoreInput, context: ScoreContext): Scored {
    const stages = new Stopwatch();
    const { bundle } = this.deps;
    const { history } = context;
    const model = bundle.file;
    const notes: string[] = context.notes ? [...context.notes] : [];
    const transactionId = input.transaction_id ?? `tx_${randomUUID()}`;
    if (input.transaction_id === undefined) notes.push(`transaction_id was not given: generated ${transactionId}.`);
    if (input.location === undefined)
      notes.push(
        'location was not given: recorded as "unknown"; whether the place and the channel are new to the customer is then missing, which the model was trained to see and does not take as evidence either way.',
      );
    if (input.payment_type === undefined)
      notes.push(
        'payment_type was not given: recorded as "unknown"; the payment-type feature and whether the channel is new to the customer are then missing, which the model was trained to see.',
      );
    this.known.note(input, notes);
    // A score request's time is when the server receives it (docs/integrating.md); never earlier than the
    // newest transaction already in the history, so the history stays in time order.
    const time = context.at ?? Math.max(this.clock(), history.newest);
    const tx: RecordedTransaction = { time, amount: input.amount, ...scoredEntities(input), transaction_id: transactionId };
    const channel = channelOf(tx);

    const { pipeline } = this;
    const priors = pipeline.priors(tx, history);
    // Keyed by entity ids: objects without a prototype start as hash tables, where literal objects
    // would grow a hidden class per distinct id (much slower to build and serialise).
    const entityHistory: ScoreResponse['entity_history'] = Object.create(null);
    // Keys are the entities' identifiers (see `put` for two that coincide).
    put(entityHistory, tx.customer_id, { role: 'customer' as const, prior_transactions: priors.customer, is_new: priors.customer === 0 }, 'customer');
    put(entityHistory, tx.merchant_id, { role: 'merchant' as const, prior_transactions: priors.merchant, is_new: priors.merchant === 0 }, 'merchant');
    put(entityHistory, channel, { role: 'channel' as const, prior_transactions: priors.channel, is_new: priors.channel === 0 }, 'channel');
    stages.lap('history');

    const features = this.features;
    pipeline.features(tx, history, features, 0);
    stages.lap('features');

    const raw = bundle.channels.map((c) => c.engine.predictRaw(features[c.name]));
    const cold = pipeline.cold(priors);
    const combined = pipeline.combined(raw, cold, input.mode);
    if (cold) {
      const floorRaised = combined.risk === model.cold_start.floor;
      notes.push(
        floorRaised
          ? `COLD_START: the customer, merchant and channel each have fewer than ${model.cold_start.min_prior} earlier transactions, so the score was raised to the model's floor ${model.cold_start.floor.toFixed(4)}.`
          : `COLD_START: the customer, merchant and channel each have fewer than ${model.cold_start.min_prior} earlier transactions; the model's score was already above the floor.`,
      );
    }
    const { risk, band, channelScores, attribution } = combined;
    const thresholds = model.thresholds[input.mode];
    stages.lap('model');

    // What rules read of this decision (and what a backtest reads back from the record).
    // The payment's key values' histories, counted once for the rules and the answer.
    const fieldHistory = context.keys ? keyHistories(history, context.keys, time) : undefined;
    const values: DecisionValues = {
      time,
      amount: tx.amount,
      customer_id: tx.customer_id,
      merchant_id: tx.merchant_id,
      location: tx.location,
      payment_type: tx.payment_type,
      mode: input.mode,
      risk_score: risk,
      risk_band: band,
      cold,
      channel_scores: channelScores,
      priors,
      fields: input.fields,
      keyHistory: fieldHistory && ((entry) => fieldHistory[entry.slice(0, entry.indexOf('='))]),
    };
    let decision = combined.decision;
    let rules: RulesOutcome | undefined;
    if (context.rules) {
      rules = runRules(context.rules, values, combined.decision, () =>
        featureMap(
          this.featureNames,
          bundle.channels.map((c) => features[c.name]),
        ),
      );
      decision = rules.decision;
      notes.push(...rulesNotes(rules, combined.decision));
      stages.lap('rules');
    }

    let reasons: ScoreReason[] = [];
    if (input.explain) {
      bundle.channels.forEach((c, k) => {
        c.engine.shapInto(features[c.name], this.phi[k]!);
      });
      reasons = topReasons(this.explained, MAX_REASONS);
      stages.lap('explain');
    } else notes.push('explain was false: reasons were not computed.');

    const evidence: ScoreResponse['graph_evidence'] = Object.create(null);
    const older = context.earlier;
    addEvidence(evidence, history, 'customer', tx.customer_id, time, older?.customer);
    addEvidence(evidence, history, 'merchant', tx.merchant_id, time, older?.merchant);
    addEvidence(evidence, history, 'channel', channel, time, older?.channel);
    const relatedRing = context.rings.related(tx.merchant_id, channel, time);
    stages.lap('evidence');

    const result: ScoreResponse = {
      transaction_id: transactionId,
      risk_score: risk,
      risk_band: band,
      decision,
      mode: input.mode,
      model_id: model.id,
      model_version: model.version,
      path: cold ? 'COLD_START' : 'MODEL',
      ...(rules ? { rules: rules.matches } : {}),
      review_threshold: thresholds.review,
      block_threshold: thresholds.block,
      channel_scores: channelScores,
      channel_attribution: attribution,
      reasons,
      entity_history: entityHistory,
      ...(fieldHistory ? { field_history: fieldHistory } : {}),
      graph_evidence: evidence,
      related_ring: relatedRing,
      stages: stages.laps,
      latency_ms: stages.elapsed(),
      notes,
    };
    return { result, transaction: tx, stages, values, modelDecision: combined.decision, rules, raw, cold, mode: input.mode };
  }
}

/** The histories of a payment's key values strictly before `time`, by field name. */
function keyHistories(history: History, keys: readonly string[], time: number): NonNullable<ScoreResponse['field_history']> {
  const out: NonNullable<ScoreResponse['field_history']> = {};
  for (const entry of keys) out[entry.slice(0, entry.indexOf('='))] = history.keyHistory(entry, time);
  return out;
}

/** A transaction as it is recorded: with its id (given or generated). */
export type RecordedTransaction = Transaction & { transaction_id: string };

/** What one score made: the answer, and what a recorded score keeps beside it. */
interface Scored {
  result: ScoreResponse;
  transaction: RecordedTransaction;
  /** The answer's stages as they ran (`result.stages` is its laps). */
  stages: Stopwatch;
  /** What the decision saw, the model's own decision, and what the rules did (when they ran). */
  values: DecisionValues;
  modelDecision: Decision;
  rules: RulesOutcome | undefined;
  /** Each channel's raw margin, the cold-start rule's verdict and the mode: what a challenger
   *  sharing the boosters needs to score the same transaction (`shadow`). */
  raw: readonly number[];
  cold: boolean;
  mode: ModeName;
}

/** What `scoreToRecord` returns: the score, and the features it was made with. */
export interface ScoredToRecord extends Scored {
  features: Float32Array;
}

/** Closes a recorded score's `record` stage once its transaction is handed over, and brings the
 *  answer's latency up to that moment. */
export function recorded(s: ScoredToRecord): void {
  const t = performance.now();
  s.stages.lap('record', t);
  s.result.latency_ms = s.stages.elapsed(t);
}
