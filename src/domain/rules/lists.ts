// Lists: what they hold, how a value is compared, and a list's items at a point in time. One
// definition for the API (which checks names and values), the live state (the items now) and
// backtests (the items as they were when each logged transaction was decided).

/** What a list holds; a rule compares it with the field of the same meaning. */
export const LIST_KINDS = ['customer_id', 'merchant_id', 'location', 'payment_type', 'channel', 'text'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/** Whether a list of `kind` can be compared with the field `field` (`in_list("name", field)`): a
 *  `text` list with any field, another only with the field of its name (a `customer_id` list with
 *  customer_id, a `channel` list with channel). */
export function kindFits(kind: ListKind, field: string): boolean {
  return kind === 'text' || kind === field;
}

/** The kinds of list that hold a case's entity: a customer's or a merchant's id kind, and text
 *  lists (a key field's value: text lists only). */
export function kindsHolding(entity: 'customer' | 'merchant' | 'key'): ListKind[] {
  return entity === 'key' ? ['text'] : [`${entity}_id`, 'text'];
}

/** The kind of list that holds a field's values, if there is one beside `text`. */
export function kindOfField(field: string): ListKind | undefined {
  return field !== 'text' && (LIST_KINDS as readonly string[]).includes(field) ? (field as ListKind) : undefined;
}

/** A list's name: what `in_list("name", ...)` says. */
export const LIST_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** Longest value on a list (identifiers are at most 200 characters everywhere). */
export const MAX_VALUE_CHARS = 200;
/** Values an audit entry of an add or a remove names (its count says how many there were). */
export const AUDITED_VALUES = 100;

/** Values are compared exactly after trimming. */
export function listValue(raw: string): string {
  return raw.trim();
}

/** Why a value cannot go on a list, or undefined when it can. */
export function valueProblem(raw: string): string | undefined {
  const v = listValue(raw);
  if (v === '') return 'is empty after trimming';
  if (v.length > MAX_VALUE_CHARS) return `is longer than ${MAX_VALUE_CHARS} characters`;
  if (v.includes('\u0000')) return 'contains a NUL character';
  return undefined;
}

/** One value's stay on a list, as stored: from `added` until the first of `removed` and `expires`. */
export interface ItemStay {
  id: number;
  list_id: string;
  value: string;
  added_at_ms: number;
  expires_at_ms: number | null;
  removed_at_ms: number | null;
}

/** The end of a stay: when it was removed or expired, whichever came first (Infinity: neither). */
export function stayEnd(s: Pick<ItemStay, 'expires_at_ms' | 'removed_at_ms'>): number {
  return Math.min(s.expires_at_ms ?? Infinity, s.removed_at_ms ?? Infinity);
}

/** Every list's items now: value → the stay's id and when it expires. Changes arrive as stays
 *  (a stay's row as last written): a newer stay of a value replaces an older one, a removed stay
 *  leaves only if it is the value's current one, so arriving out of order changes nothing. */
export class CurrentItems {
  private readonly lists = new Map<string, Map<string, { id: number; expires: number }>>();

  apply(s: ItemStay): void {
    let items = this.lists.get(s.list_id);
    const held = items?.get(s.value);
    if (s.removed_at_ms !== null) {
      if (held && held.id === s.id) items!.delete(s.value);
      return;
    }
    if (held && held.id > s.id) return;
    if (!items) this.lists.set(s.list_id, (items = new Map()));
    items.set(s.value, { id: s.id, expires: s.expires_at_ms ?? Infinity });
  }

  /** Whether the list has the value at `now` (an expired item no longer counts). */
  has(listId: string, value: string, now: number): boolean {
    const held = this.lists.get(listId)?.get(value);
    return held !== undefined && held.expires > now;
  }

  /** Items held (expired ones included until removed), for tests and health. */
  get size(): number {
    let n = 0;
    for (const items of this.lists.values()) n += items.size;
    return n;
  }
}

/** Lists as they were at any time: each value's stays, oldest first. */
export class ItemHistory {
  private readonly lists = new Map<string, Map<string, number[]>>();

  /** Adds a stay (any order). */
  add(s: ItemStay): void {
    const end = stayEnd(s);
    if (end <= s.added_at_ms) return;
    let items = this.lists.get(s.list_id);
    if (!items) this.lists.set(s.list_id, (items = new Map()));
    const stays = items.get(s.value);
    if (stays) stays.push(s.added_at_ms, end);
    else items.set(s.value, [s.added_at_ms, end]);
  }

  /** Whether the list had the value at `at`: a stay that began at or before it and ended after. */
  has(listId: string, value: string, at: number): boolean {
    const stays = this.lists.get(listId)?.get(value);
    if (!stays) return false;
    for (let k = 0; k < stays.length; k += 2) if (stays[k]! <= at && at < stays[k + 1]!) return true;
    return false;
  }
}
