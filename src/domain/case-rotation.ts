// Round-robin assignment of new cases among an inbox's members, each holding at most `cap` open
// (open or in progress) cases of the inbox: a new case goes to the member holding the fewest, ties
// to whoever was last given one longest ago (never given one: first; then the members' order). No
// member below the cap: the case waits unassigned. Pure, so two processes given the same loads and
// turns choose the same; storage/case-rotation.ts holds the inbox's lock while it asks.

/** Where an inbox's rotation stands: each member's open cases and the turn they were last given one. */
export interface Rotation {
  members: readonly string[];
  cap: number;
  /** Open or in-progress cases of the inbox per member (absent: none). */
  load: Map<string, number>;
  /** The turn each member was last given a case at (absent: never). */
  turns: Map<string, number>;
  /** The last turn given in the inbox (0: none yet). */
  lastTurn: number;
}

/** The member the next case goes to, or undefined when every member holds `cap`; the rotation is
 *  moved on (their load and turn) when one is chosen. */
export function nextAssignee(r: Rotation): string | undefined {
  let best: string | undefined;
  let bestKey: [number, number, number] | undefined;
  for (const [i, m] of r.members.entries()) {
    const load = r.load.get(m) ?? 0;
    if (load >= r.cap) continue;
    const key: [number, number, number] = [load, r.turns.get(m) ?? -1, i];
    if (!bestKey || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] || (key[1] === bestKey[1] && key[2] < bestKey[2])))) {
      best = m;
      bestKey = key;
    }
  }
  if (best === undefined) return undefined;
  r.load.set(best, (r.load.get(best) ?? 0) + 1);
  r.lastTurn += 1;
  r.turns.set(best, r.lastTurn);
  return best;
}
