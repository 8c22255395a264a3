// A rule's state as scoring needs it: its status and its live version's expression, action and the
// lists it names. One definition of the SQL that reads it, used when a process loads an
// organization's rules (rules-store.ts) and when the live feed carries a changed rule to every
// process (live-feed.ts).

import type { RuleAction } from '../domain/rules/expression.ts';

export type RuleStatus = 'draft' | 'shadow' | 'active' | 'disabled';

export interface RuleState {
  id: string;
  name: string;
  status: RuleStatus;
  deleted: boolean;
  live_version: number | null;
  expression: string | null;
  action: RuleAction | null;
  /** List name → id, for the live version. */
  lists: Record<string, string>;
}

/** The state of rule `r` as JSON text, its live version joined as `lv` (LIVE_VERSION). */
export const RULE_STATE_JSON = `json_build_object('id', r.id, 'name', r.name, 'status', r.status, 'deleted', r.deleted_at_ms IS NOT NULL,
  'live_version', r.live_version, 'expression', lv.expression, 'action', lv.action,
  'lists', coalesce((SELECT json_object_agg(l.name, l.id) FROM lists l WHERE l.id = ANY(lv.list_ids)), '{}'::json))::text`;

/** The join RULE_STATE_JSON reads the live version from. */
export const LIVE_VERSION = `LEFT JOIN rule_versions lv ON lv.rule_id = r.id AND lv.version = r.live_version`;

export function parseRuleState(json: string): RuleState {
  return JSON.parse(json) as RuleState;
}
