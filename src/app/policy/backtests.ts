// Backtesting a rule on an organization's own logged decisions, before it goes live: a member
// queues a job (jobs/backtest-job.ts) for a saved rule's version (by default its newest) or for an
// expression not saved yet, over a period (by default every transaction the organization has
// scored). Everything that can be told from the request is refused here, with nothing queued: an
// expression that does not check (`invalid_rule`), a rule or version the organization does not
// have (`not_found`), a period that ends before it begins. When the version tested is not the one
// that is live, the live one is evaluated in the same pass, so one report compares the two. The
// job counts against the organization's daily quota like any other.

import { AppError } from '../errors.ts';
import { quotaExceeded, utcDayStart } from '../datasets/job-quota.ts';
import { jobView } from '../datasets/job-view.ts';
import type { PolicyDeps } from './lists.ts';
import { invalidRule, vocabularyNow } from './rules.ts';
import { checkExpression, type RuleAction, type RuleLanguage } from '../../domain/rules/expression.ts';
import type { ListKind } from '../../domain/rules/lists.ts';
import type { BacktestParams, BacktestVersion } from '../../jobs/backtest-job.ts';
import type { OrganizationRow } from '../../storage/accounts-store.ts';
import { createOrganizationJob } from '../../storage/job-queue.ts';
import type { Job } from '../../contract/jobs.ts';
import { organizationData, type OrganizationData } from '../../storage/organization-data.ts';

export interface BacktestDeps extends PolicyDeps {
  config: PolicyDeps['config'] & { MAX_JOBS_PER_ORG_PER_DAY: number };
  jobs: { poll(): Promise<void> } | undefined;
}

/** What to test: a saved rule (a version of it, by default the newest), or an expression. */
export type BacktestTarget = { rule_id: string; version?: number | undefined } | { expression: string; action: RuleAction };

/** A version checked again with the lists it names, for the job; an expression not saved yet also
 *  with the lists' kinds (a saved version is tested as it was saved). */
function version(
  expression: string,
  action: RuleAction,
  language: RuleLanguage,
  lists: Map<string, string>,
  rule: { id: string; version: number } | null,
  kinds?: ReadonlyMap<string, ListKind>,
): BacktestVersion {
  const r = checkExpression(expression, language, new Set(lists.keys()), kinds);
  if (!r.checked) throw invalidRule(r.problems);
  return {
    rule_id: rule?.id ?? null,
    version: rule?.version ?? null,
    expression,
    action,
    lists: Object.fromEntries(r.checked.lists.map((n) => [n, lists.get(n)!])),
    fields: [...r.checked.fields],
    declared: r.checked.own,
  };
}

async function savedVersions(
  data: OrganizationData,
  language: RuleLanguage,
  ruleId: string,
  wanted: number | undefined,
): Promise<{ target: BacktestVersion; compare: BacktestVersion | null }> {
  const rule = await data.rules.one(ruleId, 0);
  const versions = await data.rules.versions(ruleId);
  if (!rule || versions.length === 0)
    throw new AppError('not_found', `No rule ${ruleId} in this organization.`, "Check the rule id (GET the organization's rules).");
  const number = wanted ?? rule.version;
  const chosen = versions.find((v) => v.version === number);
  if (!chosen)
    throw new AppError(
      'not_found',
      `Rule ${rule.name} has no version ${number} (its newest is ${rule.version}).`,
      'Give a version from GET .../rules/{rule_id}/versions, or leave version out to test the newest.',
    );
  // The lists a saved version names are those it was saved with (even if deleted since).
  const names = await data.lists.names([...new Set(versions.flatMap((v) => v.list_ids))]);
  const listsOf = (ids: string[]) => new Map(ids.map((id) => [names.get(id)!, id]));
  const target = version(chosen.expression, chosen.action, language, listsOf(chosen.list_ids), { id: rule.id, version: chosen.version });
  const live =
    (rule.status === 'active' || rule.status === 'shadow') && rule.live_version !== null && rule.live_version !== number
      ? versions.find((v) => v.version === rule.live_version)
      : undefined;
  return { target, compare: live ? version(live.expression, live.action, language, listsOf(live.list_ids), { id: rule.id, version: live.version }) : null };
}

/** Queues a backtest in `org`, which user `userId` has been checked to belong to; wakes the runner. */
export async function queueBacktest(
  deps: BacktestDeps,
  org: OrganizationRow,
  userId: string,
  body: BacktestTarget & { from?: number | undefined; to?: number | undefined },
): Promise<Job> {
  const now = (deps.clock ?? Date.now)();
  const from = body.from ?? 0;
  const to = body.to ?? now + 1;
  if (to <= from)
    throw new AppError(
      'validation_failed',
      'The period ends before it begins.',
      'Send `from` before `to`, or leave either out (from the first logged transaction, to now).',
      { fields: [{ path: 'body.to', message: 'must be after from' }] },
    );
  const data = organizationData(deps.db, org.id);
  let chosen: { target: BacktestVersion; compare: BacktestVersion | null };
  const { ids, kinds, language } = await vocabularyNow(data, now);
  if ('rule_id' in body) chosen = await savedVersions(data, language, body.rule_id, body.version);
  else chosen = { target: version(body.expression, body.action, language, ids, null, kinds), compare: null };
  const params: BacktestParams = { organization_id: org.id, ...chosen, from, to };
  const quota = deps.config.MAX_JOBS_PER_ORG_PER_DAY;
  const job = await createOrganizationJob(
    deps.db,
    { kind: 'backtest', params, dataset_id: null, mode: null, owner_user_id: userId, organization_id: org.id },
    quota,
    utcDayStart(now),
  );
  if (!job) throw quotaExceeded(org.name, quota, now);
  void deps.jobs?.poll();
  return jobView(job);
}
