// The one organization a statement on live data is bound to. Only OrganizationData
// (organization-data.ts) makes a scope, for the organization a route has decided the caller is, and
// binds that one scope into each of its parts (one per aggregate); the modules that
// hold the statements (transaction-insert.ts, transaction-reads.ts, outcome-changes.ts,
// history-load.ts, history-snapshots.ts, imported-features.ts, entity-evidence.ts, weekly-aggregates.ts, rings-store.ts,
// lists-store.ts, rules-store.ts, webhooks-store.ts, members-store.ts, data-protection.ts) take it as their first
// argument and read the organization's id from it alone, never from their caller per statement.
// The brand makes a look-alike object a type error, so a scope is not made by accident elsewhere
// (test/storage/live-store.test.ts holds that only OrganizationData binds one).

import type { Db } from './db.ts';

declare const bound: unique symbol;

export interface OrganizationScope {
  readonly db: Db;
  readonly organizationId: string;
  readonly [bound]: true;
}

/** Binds statements to one organization: for OrganizationData only. */
export function bindOrganization(db: Db, organizationId: string): OrganizationScope {
  return { db, organizationId } as OrganizationScope;
}
