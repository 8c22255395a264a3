// The rules stage of a recorded score: after the model, every `active` and `shadow` rule of the
// organization is evaluated on what the decision sees (domain/rules/decide.ts), and the decision
// becomes the first that applies of an allow, a block and a review match, else the model's. A rule
// that cannot be evaluated (a missing value) does not match; its error is reported and counted.
// Rules are compiled when they are loaded (live/policy.ts), never per request.

import { evaluateRule, type CompiledRule, type RuleAction, type RuleLanguage } from '../domain/rules/expression.ts';
import { decide, decidingAction, ruleInput, type Decision, type DecisionValues } from '../domain/rules/decide.ts';

/** An organization's rules as scoring reads them: the compiled rules to evaluate and its lists. */
export interface RuleSet {
  readonly rules: readonly CompiledRule[];
  /** The language they were compiled in (the organization's declared fields). */
  readonly language: RuleLanguage;
  /** Whether the list has the value at time `at`. */
  has(listId: string, value: string, at: number): boolean;
}

/** A rule that matched, as the answer and the stored decision show it. */
export interface RuleMatch {
  id: string;
  name: string;
  version: number;
  action: RuleAction;
  status: 'active' | 'shadow';
  /** Whether it made the decision (an active rule of the deciding action). */
  applied: boolean;
}

/** What the stage did: the matches, the rules it could not evaluate, the deciding action and the
 *  decision. */
export interface RulesOutcome {
  matches: RuleMatch[];
  errors: { id: string; name: string; message: string }[];
  action: RuleAction | undefined;
  decision: Decision;
}

/** Evaluates the rules on one transaction's values; `features` builds the features map when a rule
 *  reads it. */
export function runRules(set: RuleSet, values: DecisionValues, modelDecision: Decision, features: () => Map<string, number>): RulesOutcome {
  // Most organizations have no rules: nothing to build for them.
  if (set.rules.length === 0) return { matches: [], errors: [], action: undefined, decision: modelDecision };
  const input = ruleInput(values, features, set.language);
  const at = values.time;
  const lookup = (listId: string, value: string) => set.has(listId, value, at);
  const matches: RuleMatch[] = [];
  const errors: RulesOutcome['errors'] = [];
  for (const rule of set.rules) {
    const r = evaluateRule(rule, input, lookup);
    if (r.error !== undefined) errors.push({ id: rule.id, name: rule.name, message: r.error });
    else if (r.matched) matches.push({ id: rule.id, name: rule.name, version: rule.version, action: rule.action, status: rule.status, applied: false });
  }
  const action = decidingAction(matches.filter((m) => m.status === 'active').map((m) => m.action));
  for (const m of matches) m.applied = m.status === 'active' && m.action === action;
  return { matches, errors, action, decision: decide(modelDecision, action) };
}

/** The notes a rules outcome adds to the answer: the rule that changed the decision, and each rule
 *  that could not be evaluated. */
export function rulesNotes(o: RulesOutcome, modelDecision: Decision): string[] {
  const notes: string[] = [];
  if (o.decision !== modelDecision) {
    const deciding = o.matches.filter((m) => m.applied);
    const named = deciding.map((m) => `"${m.name}" (version ${m.version})`).join(', ');
    notes.push(`${deciding.length > 1 ? 'Rules' : 'Rule'} ${named} (${o.action}) changed the decision from ${modelDecision} to ${o.decision}.`);
  }
  for (const e of o.errors) notes.push(`Rule "${e.name}" could not be evaluated and did not match: ${e.message}.`);
  return notes;
}
