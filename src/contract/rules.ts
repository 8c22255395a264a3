// An organization's rules and lists, as their routes answer them: lists with their values and
// their recorded changes, rules with their versions and changes, and an expression's check. The
// use cases (app/policy/) return these types, the routes document and serialise them, and the
// dashboard's rule and list pages read them. What a list or a rule may hold (kinds, actions) is the
// rule language's own (domain/rules/).

import { z } from 'zod';
import { AUDITED_VALUES, LIST_KINDS, LIST_NAME } from '../domain/rules/lists.ts';
import { RULE_ACTIONS } from '../domain/rules/expression.ts';

/** A list's name, as it is made and named everywhere after. */
export const ListName = z
  .string()
  .regex(LIST_NAME, 'a list name is a lowercase letter, then up to 63 lowercase letters, digits or underscores, e.g. blocked_customers');

export const List = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(LIST_KINDS),
  description: z.string().nullable(),
  items: z.number().int().describe('Values on the list now (removed and expired ones left out)'),
  created_at: z.string(),
  created_by: z.string(),
});
export type List = z.infer<typeof List>;
export const ListIndex = z.object({ data: z.array(List) });
export type ListIndex = z.infer<typeof ListIndex>;
export const ListItem = z.object({
  value: z.string(),
  added_at: z.string(),
  added_by: z.string().describe('A user id, or `key:<api key id>`'),
  reason: z.string().nullable(),
  expires_at: z.string().nullable(),
  removed_at: z.string().nullable().describe('When the value left the list (null: it is on it); set only when reading the list as of a past time'),
  removed_by: z.string().nullable(),
});
export type ListItem = z.infer<typeof ListItem>;
export const ListPage = z.object({ list: List, data: z.array(ListItem), has_more: z.boolean() });
export type ListPage = z.infer<typeof ListPage>;
export const ListChange = z.object({
  id: z.string().describe("The change's number: the next page's `starting_after`"),
  at: z.string(),
  by: z.string().describe('A user id, or `key:<api key id>`'),
  action: z.string().describe('`created`, `items_added` or `items_removed`'),
  detail: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe(
      `\`created\`: name and kind; \`items_added\`: count, replaced (of those, values that were on the list already), values (the first ${AUDITED_VALUES}), reason, expires_at_ms; \`items_removed\`: count and values (the first ${AUDITED_VALUES}) of those that were on the list`,
    ),
});
export type ListChange = z.infer<typeof ListChange>;
/** A page of a list's recorded changes, newest first. */
export const ListAudit = z.object({ data: z.array(ListChange), has_more: z.boolean() });
export type ListAudit = z.infer<typeof ListAudit>;
export const AddResult = z.object({
  list: List,
  added: z.number().int(),
  replaced: z.number().int().describe('Of those added, values that were on the list already'),
});
export const RemoveResult = z.object({ list: List, removed: z.number().int().describe('Values that were on the list') });
export type AddResult = z.infer<typeof AddResult>;
export type RemoveResult = z.infer<typeof RemoveResult>;

export const RuleStatus = z.enum(['draft', 'shadow', 'active', 'disabled']);
export type RuleStatus = z.infer<typeof RuleStatus>;
export const Rule = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  expression: z.string().describe("The newest version's"),
  action: z.enum(RULE_ACTIONS),
  status: RuleStatus,
  version: z.number().int().describe('The newest version'),
  live_version: z.number().int().nullable().describe('The version evaluated while active or shadow (an older one while a newer draft waits)'),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  updated_by: z.string(),
  matches_7d: z.number().int().describe('Scored transactions it matched over the last 7 days'),
  errors_7d: z.number().int().describe('Scored transactions it could not be evaluated on over the last 7 days'),
});
export type Rule = z.infer<typeof Rule>;
export const RuleList = z.object({ data: z.array(Rule) });
export type RuleList = z.infer<typeof RuleList>;
export const RuleVersion = z.object({
  version: z.number().int(),
  expression: z.string(),
  action: z.enum(RULE_ACTIONS),
  description: z.string().nullable(),
  lists: z.array(z.string()).describe('The lists it names'),
  created_at: z.string(),
  created_by: z.string(),
});
export type RuleVersion = z.infer<typeof RuleVersion>;
export const RuleVersions = z.object({ data: z.array(RuleVersion) });
export type RuleVersions = z.infer<typeof RuleVersions>;
/** Why an expression cannot be used, and where. */
export const RuleProblem = z.object({ message: z.string(), line: z.number().int(), column: z.number().int() });
export type RuleProblem = z.infer<typeof RuleProblem>;
export const CheckResult = z.object({
  valid: z.boolean(),
  errors: z.array(RuleProblem),
  lists: z.array(z.string()),
  evaluation: z
    .object({
      transaction_id: z.string(),
      matched: z.boolean(),
      error: z.string().nullable(),
      values: z.record(z.string(), z.unknown()).describe('The fields the expression reads, as the decision saw them'),
    })
    .optional(),
});
export type CheckResult = z.infer<typeof CheckResult>;
/** One change of a rule: created, a new version, a status or a name, deleted. */
export const RuleChange = z.object({ at: z.string(), by: z.string(), action: z.string(), detail: z.record(z.string(), z.unknown()).nullable() });
export type RuleChange = z.infer<typeof RuleChange>;
/** Every change of a rule, oldest first. */
export const RuleHistory = z.object({ data: z.array(RuleChange) });
export type RuleHistory = z.infer<typeof RuleHistory>;
