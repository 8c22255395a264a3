// An organization's history as a process keeps it, bound to the organization (organization-data.ts
// makes one for a scope): loading it, with its rules and lists when asked, and the stored snapshot
// of it that makes a load cheap. The statements are in history-load.ts and history-snapshots.ts.

import { loadHistory, type HistoryLoader, type Loaded, type PolicyLoader, type SnapshotUse } from '../history-load.ts';
import { snapshotMeta, writeSnapshot, type SnapshotMeta } from '../history-snapshots.ts';
import type { OrganizationScope } from '../organization-scope.ts';

export class OrganizationHistory {
  constructor(private readonly scope: OrganizationScope) {}

  /** What a process keeps of the organization's history, in one snapshot: from the stored
   *  snapshot of it when `use` allows one, else from the rows (history-load.ts). */
  load(now: number, into: HistoryLoader, policy?: PolicyLoader, use?: SnapshotUse): Promise<Loaded> {
    return loadHistory(this.scope, now, into, policy, use);
  }

  /** What describes the organization's stored snapshot, if it has one (history-snapshots.ts). */
  snapshot(): Promise<SnapshotMeta | undefined> {
    return snapshotMeta(this.scope.db, this.scope);
  }

  /** Stores a snapshot of the organization's history as a process holds it (history-snapshots.ts). */
  writeSnapshot(meta: Omit<SnapshotMeta, 'bytes' | 'pieces'>, pieces: readonly Uint8Array[]): Promise<boolean> {
    return writeSnapshot(this.scope, meta, pieces);
  }
}
