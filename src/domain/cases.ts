// Cases: what groups the decisions that need a person (one entity's, in one inbox), the states a case
// goes through, how urgent it is, and what a decision joining one carries. Plain data and rules, so
// the contract and the dashboard can load it; the timeline's hash chain is case-timeline.ts's.

import { FIELD_NAME } from './fields.ts';

export const CASE_STATUSES = ['open', 'in_progress', 'snoozed', 'closed'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];
export const CASE_RESOLUTIONS = ['fraud', 'legitimate', 'inconclusive'] as const;
export type CaseResolution = (typeof CASE_RESOLUTIONS)[number];

/** The most bytes a file attached to a case may have (the dashboard checks it before sending). */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;

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

/** An inbox as every process holds it, to route decisions (deleted: routes none). */
export interface InboxState {
  id: string;
  name: string;
  group_by: string;
  /** A CEL expression over the decision; null: the default, tried after every inbox with one. */
  route: string | null;
  /** The lists the route names (`in_list`): name → id. */
  route_lists: Readonly<Record<string, string>>;
  position: number;
  on_block: boolean;
  sla_hours: number;
  /** Whether it gives the cases it opens to its members by itself (round-robin under a cap). */
  auto_assign: boolean;
  deleted: boolean;
}

/** A decision that opens or joins a case, as the decision log records it. */
export interface CaseJoin {
  inbox_id: string;
  entity_kind: 'customer' | 'merchant' | 'key';
  entity_key: string;
  transaction_id: string;
  priority: number;
  at: number;
  /** When a case it opens is due (its inbox's SLA from `at`). */
  due: number;
  /** Who made it join: `system` for a decision, a member, or `key:<id>`. */
  actor: string;
  /** Why, in the timeline (a decision's outcome, a server's reason). */
  reason: string;
  /** Whether its inbox assigns the cases it opens by itself, as the writer's process last heard
   *  (the decision log then opens them in a transaction that also assigns). */
  assigns?: boolean;
}
