// Cases: what groups the decisions that need a person (one entity's, in one inbox), the states a case
// goes through, how urgent it is, and the timeline an auditor can trust. The timeline's entries are
// chained: each carries the SHA-256 of the previous entry's hash and its own content, so a changed,
// removed or inserted entry breaks every hash after it; `verifyChain` recomputes them exactly as
// the database wrote them (migrations/023_cases.sql).

import { createHash } from 'node:crypto';
import { FIELD_NAME } from './fields.ts';

export const CASE_STATUSES = ['open', 'in_progress', 'snoozed', 'closed'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];
export const CASE_RESOLUTIONS = ['fraud', 'legitimate', 'inconclusive'] as const;
export type CaseResolution = (typeof CASE_RESOLUTIONS)[number];

/** Whose decisions a case of an inbox groups. */
export type GroupBy = { kind: 'customer' } | { kind: 'merchant' } | { kind: 'key'; field: string };

/** `customer`, `merchant` or `field:<name>` (a key field), or undefined for anything else. */
export function parseGroupBy(text: string): GroupBy | undefined {
  if (text === 'customer' || text === 'merchant') return { kind: text };
  const m = /^field:(.+)$/.exec(text);
  return m && FIELD_NAME.test(m[1]!) ? { kind: 'key', field: m[1]! } : undefined;
}

export const groupByText = (g: GroupBy): string => (g.kind === 'key' ? `field:${g.field}` : g.kind);

/** A case's urgency among those equally due: the expected loss of its worst decision (its score
 *  times its amount). */
export const casePriority = (riskScore: number, amount: number): number => riskScore * amount;

/** One entry of a case's timeline as stored. */
export interface TimelineEntry {
  n: number;
  at_ms: number;
  actor: string;
  kind: string;
  /** JSON text, hashed as it is stored. */
  detail: string;
  prev_hash: string;
  hash: string;
}

/** The hash an entry must carry after `prev` (the previous entry's hash, '' for the first). */
export function entryHash(prev: string, e: Pick<TimelineEntry, 'n' | 'at_ms' | 'actor' | 'kind' | 'detail'>): string {
  return createHash('sha256').update(`${prev}\n${e.n}\t${e.at_ms}\t${e.actor}\t${e.kind}\t${e.detail}`, 'utf8').digest('hex');
}

/** Whether a timeline (in order) is one unbroken chain from its first entry, and where it breaks. */
export function verifyChain(entries: readonly TimelineEntry[]): { intact: boolean; broken_at: number | null } {
  let prev = '';
  for (const [i, e] of entries.entries()) {
    if (e.n !== i + 1 || e.prev_hash !== prev || entryHash(prev, e) !== e.hash) return { intact: false, broken_at: e.n };
    prev = e.hash;
  }
  return { intact: true, broken_at: null };
}

/** An inbox as every process holds it, to route decisions (deleted: routes none). */
export interface InboxState {
  id: string;
  name: string;
  group_by: string;
  /** A CEL expression over the decision; null: the default, tried after every inbox with one. */
  route: string | null;
  position: number;
  on_block: boolean;
  sla_hours: number;
  deleted: boolean;
}
