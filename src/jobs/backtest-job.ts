// The handler of `backtest` jobs: a rule version (and, to compare, the version that is live)
// evaluated on every transaction the organization scored in the period, each on the values its
// decision saw (storage/decision-inputs.ts) and with the lists as they were at its time, tallied
// into the report (domain/rules/backtest.ts). Transactions are read a page at a time in time order,
// so memory stays flat however many there are; progress is the share read.

import {
  compileRule,
  evaluateRule,
  ruleLanguage,
  type CompiledRule,
  type DeclaredField,
  type RuleAction,
  type RuleLanguage,
} from '../domain/rules/expression.ts';
import { ruleInput, valuesRead, type Decision } from '../domain/rules/decide.ts';
import { Tally } from '../domain/rules/backtest.ts';
import { ItemHistory } from '../domain/rules/lists.ts';
import type { Db } from '../storage/db.ts';
import { decisionValues, loggedFeatures } from '../storage/decision-inputs.ts';
import { organizationData } from '../storage/organization-data.ts';
import { JobRefused, JobStopped, type JobHandler } from './runner.ts';
import type { TestedVersion } from '../contract/jobs.ts';

const DAY = 86_400_000;

/** A rule version to evaluate, as the job was queued with it (checked then). */
export interface BacktestVersion extends TestedVersion {
  /** List name → id. */
  lists: Record<string, string>;
  /** The fields the expression reads (an example shows their values). */
  fields: string[];
  /** The organization's own fields it reads, as declared when the backtest was queued. */
  declared?: DeclaredField[] | undefined;
}

export interface BacktestParams {
  organization_id: string;
  target: BacktestVersion;
  /** The rule's live version, when it is not the target. */
  compare: BacktestVersion | null;
  /** Epoch ms: [from, to). */
  from: number;
  to: number;
}

export interface BacktestDeps {
  db: Db;
  /** Each channel's feature names of a model (rules that read `features`). */
  featureNames(modelId: string): Promise<readonly (readonly string[])[] | undefined>;
  /** Outcomes of the newest transactions are still arriving over this many ms. */
  labelDelay: number;
  clock?: () => number;
}

function compile(v: BacktestVersion, language: RuleLanguage): CompiledRule {
  return compileRule(
    {
      id: v.rule_id ?? 'draft',
      name: 'backtest',
      version: v.version ?? 0,
      action: v.action,
      status: 'active',
      expression: v.expression,
      lists: new Map(Object.entries(v.lists)),
    },
    language,
  );
}

/** The language the versions were checked in: the organization's own fields they read, as declared
 *  when the backtest was queued. */
function languageOf(versions: readonly BacktestVersion[]): RuleLanguage {
  const declared = new Map<string, DeclaredField>();
  for (const v of versions) for (const f of v.declared ?? []) declared.set(f.name, f);
  return ruleLanguage(declared.values());
}

export function backtestHandler(deps: BacktestDeps): JobHandler {
  return {
    stage: 'evaluating',
    failure: (message) => `the backtest failed on our side: ${message.slice(0, 300)}`,
    async run(job, { progress, stopped }) {
      const p = job.params as BacktestParams | null;
      if (!p?.organization_id || !p.target?.expression) throw new JobRefused('the job does not say which rule to test; queue the backtest again');
      const data = organizationData(deps.db, p.organization_id);
      const versions = [p.target, ...(p.compare ? [p.compare] : [])];
      const language = languageOf(versions);
      const rules = versions.map((v) => compile(v, language));
      const withFields = rules.some((r) => r.fieldsRead.length > 0);
      const now = (deps.clock ?? Date.now)();
      const tallies = versions.map((v) => new Tally(v.action, now - deps.labelDelay));
      const history = new ItemHistory();
      const listIds = [...new Set(versions.flatMap((v) => Object.values(v.lists)))];
      if (listIds.length)
        await data.lists.stays(listIds, (stays) =>
          stays.forEach((s) => {
            history.add(s);
          }),
        );
      const withFeatures = rules.some((r) => r.readsFeatures);
      const names = new Map<string, readonly (readonly string[])[]>();
      const total = await data.decisions.count(p.from, p.to);
      let scanned = 0;
      let unreadable = 0;
      let allFraud = 0;
      let after: [number, number] | undefined;
      // One lookup for every row (the row's time is set before its rules run) and a features map
      // built only for rules that read it: nothing is made per row that a row does not need.
      let at = 0;
      const lookup = (listId: string, value: string) => history.has(listId, value, at);
      const noFeatures = () => new Map<string, number>();
      for (;;) {
        // Handed back to the queue: whoever claims it next starts it again.
        if (stopped()) throw new JobStopped();
        const page = await data.decisions.page({ from: p.from, to: p.to, after, withFeatures, withFields });
        if (page.length === 0) break;
        for (const row of page) {
          scanned += 1;
          if (row.label === 1) allFraud += 1;
          const values = decisionValues(row);
          if (!values) {
            unreadable += 1;
            continue;
          }
          let features = noFeatures;
          if (withFeatures) {
            let featureNames: readonly (readonly string[])[] = [];
            if (row.model_id) {
              if (!names.has(row.model_id)) names.set(row.model_id, (await deps.featureNames(row.model_id)) ?? []);
              featureNames = names.get(row.model_id)!;
            }
            features = () => loggedFeatures(row.features, featureNames);
          }
          const input = ruleInput(values, features, language);
          at = row.time_ms;
          for (let k = 0; k < rules.length; k++) {
            const r = evaluateRule(rules[k]!, input, lookup);
            if (r.error !== undefined) tallies[k]!.error();
            else if (r.missing !== undefined) tallies[k]!.missingField();
            else if (r.matched) {
              const logged = {
                transaction_id: row.transaction_id,
                time: row.time_ms,
                amount: row.amount,
                decision: row.decision as Decision,
                model_decision: (row.model_decision ?? row.decision) as Decision,
                rule_action: row.rule_action as RuleAction | null,
                label: row.label,
              };
              const fields = versions[k]!.fields;
              tallies[k]!.match(logged, () => valuesRead(input, fields));
            }
          }
        }
        const last = page[page.length - 1]!;
        after = [last.time_ms, last.seq];
        progress.fraction = total ? Math.min(1, scanned / total) : 1;
        await progress.write();
      }
      const report = (k: number) => tallies[k]!.report(allFraud, Math.round(deps.labelDelay / DAY));
      const describe = (v: BacktestVersion) => ({ rule_id: v.rule_id, version: v.version, expression: v.expression, action: v.action });
      const target = report(0);
      if (unreadable) target.warnings.push(`${unreadable} transaction(s) had no record of what their decision saw and were skipped.`);
      return {
        rule: describe(p.target),
        from: new Date(p.from).toISOString(),
        to: new Date(Math.min(p.to, now)).toISOString(),
        scanned,
        reported_fraud: allFraud,
        ...target,
        examples: tallies[0]!.examples,
        compare: p.compare ? { rule: describe(p.compare), ...report(1) } : null,
      };
    },
  };
}
