// An organization's rules and their versions, bound to the organization (organization-data.ts
// makes one for a scope): creating, changing and deleting rules, reading them with their matches
// and errors, their versions, the rules that use a list, and a rule's audit. The statements are in
// rules-store.ts.

import type { OrganizationScope } from '../organization-scope.ts';
import type { RuleStatus } from '../rule-state.ts';
import {
  auditOf,
  changeRule,
  countRules,
  createRule,
  deleteRule,
  listRules,
  ruleVersions,
  rulesUsingList,
  type AuditRow,
  type ListsGone,
  type RuleChange,
  type RuleRow,
  type VersionInput,
  type VersionRow,
} from '../rules-store.ts';

export class OrganizationRules {
  constructor(private readonly scope: OrganizationScope) {}

  create(r: { id: string; name: string; status: RuleStatus; version: VersionInput; at: number; by: string }): Promise<{ xid: number } | 'taken' | ListsGone> {
    return createRule(this.scope, r);
  }

  change(id: string, c: RuleChange, at: number, by: string): Promise<{ xid: number } | 'taken' | ListsGone | undefined> {
    return changeRule(this.scope, id, c, at, by);
  }

  delete(id: string, at: number, by: string): Promise<{ xid: number } | undefined> {
    return deleteRule(this.scope, id, at, by);
  }

  /** The rules with their matches and errors since `since`. */
  all(since: number): Promise<RuleRow[]> {
    return listRules(this.scope, since);
  }

  /** One rule with its matches and errors since `since`; undefined when the organization has none of that id. */
  async one(id: string, since: number): Promise<RuleRow | undefined> {
    return (await listRules(this.scope, since, id))[0];
  }

  versions(id: string): Promise<VersionRow[]> {
    return ruleVersions(this.scope, id);
  }

  /** Names of the rules evaluated now (active or shadow) whose live version names the list. */
  usingList(listId: string): Promise<string[]> {
    return rulesUsingList(this.scope.db, this.scope, listId);
  }

  count(): Promise<number> {
    return countRules(this.scope);
  }

  /** Every recorded change of a rule, oldest first. */
  audit(id: string): Promise<AuditRow[]> {
    return auditOf(this.scope, 'rule', id);
  }
}
