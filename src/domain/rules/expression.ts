// The rule language: CEL (Common Expression Language) through @marcbachmann/cel-js, a maintained
// implementation that parses and type-checks expressions and evaluates its own tree; user text is
// never evaluated as JavaScript. This module declares the fields (fields.ts) to CEL, and an
// organization's own declared fields as `fields.<name>` (one language per set of declarations, made
// once and shared), and is the one definition of what is refused when a rule is saved and of a
// compiled rule.
// Safety: an expression sees only the declared fields, typed, so `this`, `constructor` or any
// other name is refused when it is checked; a map key that is not there (`features["__proto__"]`)
// fails at run time as a missing key, never reaching an object's prototype. What could make one
// evaluation slow is refused when the rule is saved: more than MAX_EXPRESSION_CHARS characters,
// nesting deeper than MAX_DEPTH, a comprehension (all, exists, map, filter) inside another (a
// thousand elements each would be a million steps), and `matches`, whose regular expressions can
// backtrack for ever on a crafted value (JavaScript has no linear-time engine): lists,
// `startsWith`, `endsWith` and `contains` say the same things safely.

import { RULE_FIELDS } from './fields.ts';
import { kindFits, kindOfField, type ListKind } from './lists.ts';
import type { FieldType, FieldValue } from '../fields.ts';
import { Environment, type ParseResult } from '@marcbachmann/cel-js';

/** Longest expression accepted. */
export const MAX_EXPRESSION_CHARS = 4_000;
/** Deepest nesting the parser accepts. */
export const MAX_DEPTH = 32;
/** Most syntax-tree nodes in one expression (4,000 characters rarely make 1,000). */
const MAX_NODES = 2_000;

/** What a rule does when its expression is true. */
export const RULE_ACTIONS = ['allow', 'block', 'review'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** An entity's history as the decision saw it. A class registered with the rule language (below),
 *  so that an expression reads it as it is: a plain object would be converted into the library's
 *  own type again by every rule that read one. */
export class EntityHistoryValue {
  readonly prior_transactions: bigint;
  readonly is_new: boolean;

  constructor(prior_transactions: bigint, is_new: boolean) {
    this.prior_transactions = prior_transactions;
    this.is_new = is_new;
  }
}

export type RuleFieldName = (typeof RULE_FIELDS)[number]['name'];

/** An organization's own fields on one payment, as rules read them (`fields.email_domain`): the
 *  declared fields it carried, as properties. One class for every organization's language, so a
 *  rule compiled before a field was declared reads the values of a payment scored after. */
export class FieldValues {
  [name: string]: FieldValue;
}

/** A declared field as the rule language types it (a key has a history: `field_history.<name>`). */
export interface DeclaredField {
  name: string;
  type: FieldType;
  key?: boolean | undefined;
}

/** A key field's value's history before the payment, as rules read it (key-fields.ts KeyHistory,
 *  with CEL's ints). */
export class FieldHistoryValue {
  readonly prior_transactions: bigint;
  readonly is_new: boolean;
  readonly count_1h: bigint;
  readonly count_24h: bigint;
  readonly count_7d: bigint;
  readonly amount_24h: number;
  readonly distinct_customers_24h: bigint;
  readonly distinct_customers_30d: bigint;

  constructor(
    prior_transactions: bigint,
    is_new: boolean,
    count_1h: bigint,
    count_24h: bigint,
    count_7d: bigint,
    amount_24h: number,
    distinct_customers_24h: bigint,
    distinct_customers_30d: bigint,
  ) {
    this.prior_transactions = prior_transactions;
    this.is_new = is_new;
    this.count_1h = count_1h;
    this.count_24h = count_24h;
    this.count_7d = count_7d;
    this.amount_24h = amount_24h;
    this.distinct_customers_24h = distinct_customers_24h;
    this.distinct_customers_30d = distinct_customers_30d;
  }
}

/** The histories of the key values a payment carried, by field name (`field_history.device_hash`). */
export class FieldHistories {
  [name: string]: FieldHistoryValue;
}

/** What `field_history.<name>` has, with its CEL types (docs/rules.md says what each means). */
export const FIELD_HISTORY_MEMBERS = {
  prior_transactions: 'int',
  is_new: 'bool',
  count_1h: 'int',
  count_24h: 'int',
  count_7d: 'int',
  amount_24h: 'double',
  distinct_customers_24h: 'int',
  distinct_customers_30d: 'int',
} as const;

const CEL_TYPE: Record<FieldType, string> = { string: 'string', number: 'double', boolean: 'bool' };

/** The values an expression reads, in the types CEL gives them (int as bigint). `features` may be
 *  a getter: it is read only by rules that name it. */
export interface RuleInput {
  amount: number;
  customer_id: string;
  merchant_id: string;
  location: string;
  payment_type: string;
  channel: string;
  mode: string;
  hour: bigint;
  weekday: bigint;
  risk_score: number;
  risk_band: string;
  path: string;
  channel_scores: Record<string, number>;
  features: Map<string, number>;
  customer: EntityHistoryValue;
  merchant: EntityHistoryValue;
  channel_history: EntityHistoryValue;
  /** The declared fields the payment carried (a getter: built only for rules that read it). */
  fields: FieldValues;
  /** The histories of the key values it carried (a getter: built only for rules that read it). */
  field_history: FieldHistories;
}

/** Whether a list has a value: answered by whoever evaluates (the lists of now, or of a past time). */
export type ListLookup = (listId: string, value: string) => boolean;

/** A problem with an expression, at its place (1-based line and column). */
export interface RuleProblem {
  message: string;
  line: number;
  column: number;
}

/** The lookup of the evaluation running now. Evaluation is synchronous, so one evaluator at a time
 *  sets it (`evaluateRule`) and `in_list` reads it; names resolve to list ids when a rule compiles. */
let lookup: ListLookup = () => false;
/** The list ids of the rule being evaluated, by the names its expression uses. */
let listIds: ReadonlyMap<string, string> = new Map();

function inList(name: string, value: string): boolean {
  const id = listIds.get(name);
  if (id === undefined) throw new Error(`no list named ${name}`);
  return lookup(id, value.trim());
}

/** What every organization's language has: the built-in fields and in_list. Frozen once a
 *  language is cloned from it. */
const base = new Environment({ limits: { maxDepth: MAX_DEPTH, maxAstNodes: MAX_NODES } });
base.registerType('history', { ctor: EntityHistoryValue, fields: { prior_transactions: 'int', is_new: 'bool' } } as never);
base.registerType('FieldHistory', { ctor: FieldHistoryValue, fields: FIELD_HISTORY_MEMBERS } as never);
for (const f of RULE_FIELDS) base.registerVariable(f.name, f.type);
base.registerFunction('in_list(string, string): bool', inList, {
  description: 'Whether the named list has the value (compared after trimming), at the time of the transaction.',
});

/** A language: the built-in fields and one organization's declared fields. */
export interface RuleLanguage {
  readonly environment: Environment;
  /** The declared fields' types, by name. */
  readonly fields: ReadonlyMap<string, FieldType>;
  /** Those that are keys. */
  readonly keys: ReadonlySet<string>;
}

/** Languages made, by their declarations (name and type, in name order): organizations that
 *  declare the same fields share one, and one made stays made while its process lives. The number
 *  of distinct declarations is small next to that of payments, but bounded all the same. */
const languages = new Map<string, RuleLanguage>();
const MAX_LANGUAGES = 1_000;

/** The rule language of an organization that declares `declared` (retired fields left out). */
export function ruleLanguage(declared: Iterable<DeclaredField>): RuleLanguage {
  const sorted = [...declared].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const signature = sorted.map((f) => `${f.name}:${f.type}${f.key ? ':key' : ''}`).join(',');
  const made = languages.get(signature);
  if (made) return made;
  const environment = base.clone();
  const keys = sorted.filter((f) => f.key);
  environment.registerType('Fields', { ctor: FieldValues, fields: Object.fromEntries(sorted.map((f) => [f.name, CEL_TYPE[f.type]])) } as never);
  environment.registerVariable('fields', 'Fields');
  environment.registerType('FieldHistories', { ctor: FieldHistories, fields: Object.fromEntries(keys.map((f) => [f.name, 'FieldHistory'])) } as never);
  environment.registerVariable('field_history', 'FieldHistories');
  const language: RuleLanguage = { environment, fields: new Map(sorted.map((f) => [f.name, f.type])), keys: new Set(keys.map((f) => f.name)) };
  if (languages.size >= MAX_LANGUAGES) languages.delete(languages.keys().next().value!);
  languages.set(signature, language);
  return language;
}

/** The language of an organization with no declared fields. */
export const BUILT_IN_LANGUAGE = ruleLanguage([]);

/** A syntax-tree node as the parser makes it. */
interface Node {
  op: string;
  args: unknown;
  start?: number;
}

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && typeof (v as Node).op === 'string';
}

/** Visits every node of a tree with how many comprehensions enclose it. */
function walk(v: unknown, visit: (n: Node, comprehensions: number) => void, comprehensions = 0): void {
  if (Array.isArray(v)) {
    for (const c of v) walk(c, visit, comprehensions);
    return;
  }
  if (!isNode(v)) return;
  visit(v, comprehensions);
  const inner = v.op === 'rcall' && Array.isArray(v.args) && COMPREHENSIONS.has(v.args[0] as string) ? comprehensions + 1 : comprehensions;
  walk(v.args, visit, inner);
}

/** The field a node reads of `fields` or `field_history` (`fields.x`, `field_history["x"]`), if
 *  it reads one: its name, and whether it reads the history. */
function ownField(n: Node): { name: string; history: boolean } | undefined {
  if ((n.op !== '.' && n.op !== '.?' && n.op !== '[]') || !Array.isArray(n.args)) return undefined;
  const [target, key] = n.args as unknown[];
  if (!isNode(target) || target.op !== 'id' || (target.args !== 'fields' && target.args !== 'field_history')) return undefined;
  const name = isNode(key) ? (key.op === 'value' && typeof key.args === 'string' ? key.args : undefined) : typeof key === 'string' ? key : undefined;
  return name === undefined ? undefined : { name, history: target.args === 'field_history' };
}

/** 1-based line and column of a character offset. */
export function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

function problem(text: string, message: string, offset: number): RuleProblem {
  return { message, ...position(text, offset) };
}

/** The library's message without the excerpt it draws under it. */
function messageOf(e: { message: string }): string {
  return e.message.split('\n')[0]!.trim();
}

function offsetOf(e: unknown): number {
  const err = e as { range?: { start?: number }; node?: { start?: number; pos?: number } };
  return err.range?.start ?? err.node?.start ?? err.node?.pos ?? 0;
}

/** A checked expression: the list names it uses, the names it reads (built-in fields, `fields`)
 *  and the organization's own fields it reads. */
export interface CheckedExpression {
  lists: string[];
  fields: Set<string>;
  own: DeclaredField[];
}

const FIELD_NAMES: ReadonlySet<string> = new Set(RULE_FIELDS.map((f) => f.name));

/**
 * Checks an expression: its syntax, its types (it must be a bool), the names it reads, the lists it
 * names (each a string literal in `lists`), and the limits above. Given each list's kind, a list
 * compared with a field (`in_list("name", customer_id)`) must hold that field's values (or be a
 * `text` list): a customer list compared with merchant_id would never match, silently. Returns the
 * problems (empty when it can be saved) and, when there are none, what it uses.
 */
export function checkExpression(
  text: string,
  language: RuleLanguage,
  knownLists: ReadonlySet<string>,
  kinds?: ReadonlyMap<string, ListKind>,
): { problems: RuleProblem[]; checked?: CheckedExpression } {
  if (text.trim() === '') return { problems: [problem(text, 'The expression is empty: write a condition, e.g. amount > 1000.0', 0)] };
  if (text.length > MAX_EXPRESSION_CHARS)
    return { problems: [problem(text, `The expression has ${text.length} characters; at most ${MAX_EXPRESSION_CHARS} are allowed.`, MAX_EXPRESSION_CHARS)] };
  let parsed: ParseResult;
  try {
    parsed = language.environment.parse(text);
  } catch (e) {
    return { problems: [problem(text, messageOf(e as Error), offsetOf(e))] };
  }
  const problems: RuleProblem[] = [];
  const lists: string[] = [];
  const fields = new Set<string>();
  const own = new Map<string, DeclaredField>();
  walk(parsed.ast, (n, comprehensions) => {
    const args = n.args as unknown[];
    if (n.op === 'id' && typeof n.args === 'string') fields.add(n.args);
    const read = ownField(n);
    const type = read === undefined ? undefined : language.fields.get(read.name);
    if (read && type !== undefined) {
      const key = language.keys.has(read.name);
      own.set(read.name, { name: read.name, type, key });
      if (read.history && !key)
        problems.push(
          problem(
            text,
            `fields.${read.name} is not a key field, so it has no field_history: only a field declared with key: true keeps a history of its values.`,
            n.start ?? 0,
          ),
        );
    }
    if (read && type === undefined)
      problems.push(
        problem(
          text,
          `fields.${read.name} is not a declared field of this organization: declare it on the Fields page (or POST .../fields) first, or correct the name.`,
          n.start ?? 0,
        ),
      );
    // `matches` as a method (s.matches(re)) or a function (matches(s, re)).
    if ((n.op === 'rcall' || n.op === 'call') && Array.isArray(args) && args[0] === 'matches')
      problems.push(
        problem(
          text,
          'matches() is not available: a regular expression can take unbounded time on a crafted value. Use startsWith(), endsWith(), contains() or a list.',
          n.start ?? 0,
        ),
      );
    if (n.op === 'rcall' && Array.isArray(args) && COMPREHENSIONS.has(args[0] as string) && comprehensions > 0)
      problems.push(
        problem(
          text,
          `${String(args[0])}() inside another comprehension is not allowed: its cost would multiply. Use one comprehension, or a list.`,
          n.start ?? 0,
        ),
      );
    if (n.op === 'call' && Array.isArray(args) && args[0] === 'in_list') {
      const first = (args[1] as unknown[] | undefined)?.[0];
      if (!isNode(first) || first.op !== 'value' || typeof first.args !== 'string') {
        problems.push(
          problem(text, 'in_list() takes the list\'s name as a quoted string first, e.g. in_list("blocked_customers", customer_id).', n.start ?? 0),
        );
      } else if (!knownLists.has(first.args)) {
        problems.push(
          problem(
            text,
            `There is no list named "${first.args}" in this organization: create it on the Lists page (or POST .../lists) first.`,
            first.start ?? n.start ?? 0,
          ),
        );
      } else {
        const name = first.args;
        const kind = kinds?.get(name);
        const second = (args[1] as unknown[] | undefined)?.[1];
        if (
          kind !== undefined &&
          isNode(second) &&
          second.op === 'id' &&
          typeof second.args === 'string' &&
          FIELD_NAMES.has(second.args) &&
          !kindFits(kind, second.args)
        ) {
          const field = second.args;
          const fitting = kindOfField(field);
          problems.push(
            problem(
              text,
              `The list "${name}" holds ${kind} values, but in_list compares it with ${field}: compare it with ${kind}, or use a list of kind ${fitting ? `${fitting} (or text)` : 'text'} for ${field}.`,
              second.start ?? n.start ?? 0,
            ),
          );
        }
        if (!lists.includes(name)) lists.push(name);
      }
    }
  });
  if (problems.length) return { problems };
  const result = parsed.check();
  if (!result.valid) return { problems: [problem(text, messageOf(result.error!), offsetOf(result.error))] };
  if (result.type !== 'bool')
    return { problems: [problem(text, `The expression gives a ${result.type}; a rule needs true or false, e.g. amount > 1000.0`, 0)] };
  return { problems: [], checked: { lists, fields, own: [...own.values()] } };
}

export interface RuleDefinition {
  id: string;
  name: string;
  version: number;
  action: RuleAction;
  status: 'active' | 'shadow';
  expression: string;
  /** List names → ids, as the version was saved. */
  lists: ReadonlyMap<string, string>;
}

/** A rule version ready to evaluate: compiled once, when it is loaded. */
export interface CompiledRule extends RuleDefinition {
  /** Whether it reads `features` (built only when a rule does). */
  readsFeatures: boolean;
  /** The organization's own fields it reads (`fields.x`): one missing from a payment is a
   *  non-match, not an error. */
  fieldsRead: readonly string[];
  /** Those it reads the history of (`field_history.x`): one without a history known (a decision
   *  scored before its history was kept) is a non-match too. */
  historyRead: readonly string[];
  run: (input: RuleInput) => unknown;
}

/** Compiles a saved rule version (checked when it was saved) in its organization's language. */
export function compileRule(def: RuleDefinition, language: RuleLanguage): CompiledRule {
  const parsed = language.environment.parse(def.expression);
  let readsFeatures = false;
  const fieldsRead = new Set<string>();
  const historyRead = new Set<string>();
  walk(parsed.ast, (n) => {
    if (n.op === 'id' && n.args === 'features') readsFeatures = true;
    const read = ownField(n);
    if (read !== undefined) fieldsRead.add(read.name);
    if (read?.history) historyRead.add(read.name);
  });
  return { ...def, readsFeatures, fieldsRead: [...fieldsRead], historyRead: [...historyRead], run: parsed as unknown as (input: RuleInput) => unknown };
}

/** One rule's result on one input: matched, not (`missing`: because the payment did not carry a
 *  field the rule reads), or why it could not be evaluated. */
export type RuleOutcome = { matched: boolean; error?: undefined; missing?: string } | { matched: false; error: string; missing?: undefined };

/** Evaluates a rule; an error (a missing value, a missing list) is a non-match with its reason. */
export function evaluateRule(rule: CompiledRule, input: RuleInput, lists: ListLookup): RuleOutcome {
  lookup = lists;
  listIds = rule.lists;
  // A missing value is an exception inside the library, made even where `&&` or `||` then
  // discards it (`error && false` is false), and a new customer's features are often missing.
  // Only the message is kept, so no stack is captured: capturing it would be most of such a
  // rule's cost.
  const stackLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return { matched: rule.run(input) === true };
  } catch (e) {
    // A field the payment did not carry (or carried before it was declared): the rule does not
    // match, as documented, and that is no fault of the rule's.
    if (rule.fieldsRead.length) {
      const carried = input.fields;
      const missing = rule.fieldsRead.find((f) => !Object.hasOwn(carried, f));
      if (missing !== undefined) return { matched: false, missing };
      if (rule.historyRead.length) {
        const histories = input.field_history;
        const unknown = rule.historyRead.find((f) => !Object.hasOwn(histories, f));
        if (unknown !== undefined) return { matched: false, missing: unknown };
      }
    }
    return { matched: false, error: messageOf(e as Error) };
  } finally {
    Error.stackTraceLimit = stackLimit;
  }
}

/** Checks an expression and evaluates it once on `input` (POST .../rules/check with a transaction). */
export function evaluateText(text: string, lists: ReadonlyMap<string, string>, input: RuleInput, lookupFn: ListLookup, language: RuleLanguage): RuleOutcome {
  return evaluateRule(compileRule({ id: '', name: '', version: 0, action: 'review', status: 'shadow', expression: text, lists }, language), input, lookupFn);
}
