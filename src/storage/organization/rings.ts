// An organization's ring analyses, bound to the organization (organization-data.ts makes one for a
// scope): a window's transactions to analyse, the rings found in it, and the latest windows' rings.
// The statements are in rings-store.ts.

import type { Ring } from '../../domain/rings.ts';
import type { OrganizationScope } from '../organization-scope.ts';
import { storedRings, storeRings, windowRows, type WindowRows } from '../rings-store.ts';

export class OrganizationRings {
  constructor(private readonly scope: OrganizationScope) {}

  /** A ring window's transactions, in time order, as text to hand a worker thread as it is
   *  (rings-store.ts). */
  window(from: number, to: number): Promise<{ rows: WindowRows; count: number }> {
    return windowRows(this.scope, from, to);
  }

  /** Stores a window's rings and tells every process (rings-store.ts). */
  store(start: number, rings: readonly Ring[]): Promise<void> {
    return storeRings(this.scope, start, rings);
  }

  /** The rings of the latest `windows` analysed windows (rings-store.ts). */
  stored(windows: number): Promise<Ring[]> {
    return storedRings(this.scope, windows);
  }
}
