// A case's timeline an auditor can trust: its entries are chained, each carrying the SHA-256 of the
// previous entry's hash and its own content, so a changed, removed or inserted entry breaks every
// hash after it. `verifyChain` recomputes them exactly as the database wrote them
// (migrations/023_cases.sql).

import { createHash } from 'node:crypto';

/** One entry of a case's timeline as stored. */
export interface TimelineEntry {
  n: number;
  at_ms: number;
  actor: string;
  kind: string;
  /** JSON text, hashed as it is stored. */
  detail: string;
  prev_hash: string;
  hash: string;
}

/** The hash an entry must carry after `prev` (the previous entry's hash, '' for the first). */
export function entryHash(prev: string, e: Pick<TimelineEntry, 'n' | 'at_ms' | 'actor' | 'kind' | 'detail'>): string {
  return createHash('sha256').update(`${prev}\n${e.n}\t${e.at_ms}\t${e.actor}\t${e.kind}\t${e.detail}`, 'utf8').digest('hex');
}

/** Whether a timeline (in order) is one unbroken chain from its first entry, and where it breaks. */
export function verifyChain(entries: readonly TimelineEntry[]): { intact: boolean; broken_at: number | null } {
  let prev = '';
  for (const [i, e] of entries.entries()) {
    if (e.n !== i + 1 || e.prev_hash !== prev || entryHash(prev, e) !== e.hash) return { intact: false, broken_at: e.n };
    prev = e.hash;
  }
  return { intact: true, broken_at: null };
}
