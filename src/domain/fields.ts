// An organization's own fields on a payment (its card's BIN country, an e-mail domain, a hashed
// device id, whether 3-D Secure passed): what a declaration is, which names and values are
// accepted, and which values are never accepted at all. A card number or an IP address is personal
// data the service deliberately has no field for: a value that is one is refused before it is
// stored, logged or echoed, whatever the field is called (docs/integrating.md, "Custom fields").

export const FIELD_TYPES = ['string', 'number', 'boolean'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export type FieldValue = string | number | boolean;

/** A field's name: a lowercase letter, then up to 39 lowercase letters, digits or underscores. */
export const FIELD_NAME = /^[a-z][a-z0-9_]{0,39}$/;
/** Declared fields an organization may have at once, and of them keys (a history of their values). */
export const MAX_FIELDS = 50;
export const MAX_KEY_FIELDS = 5;
/** Fields one payment may carry, and the longest string value. */
export const MAX_SENT_FIELDS = 50;
export const MAX_FIELD_TEXT = 500;

export interface FieldDeclaration {
  name: string;
  type: FieldType;
  description: string | null;
  /** A string field whose values have a history of their own. */
  key: boolean;
}

/** A field as every process holds it: declared now, or retired (then no longer read). */
export interface FieldState {
  name: string;
  type: FieldType;
  key: boolean;
  retired: boolean;
}

/** What a value must never be: the reason code it is refused with. */
export type ForbiddenKind = 'card_number_refused' | 'ip_address_refused';

/** Whether `digits` (0-9 only) passes the Luhn check that every payment card number passes. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** 13 to 19 digits, in groups separated by single spaces or dashes, passing the Luhn check. */
const CARD_SHAPE = /^\d(?:[ -]?\d){12,18}$/;
function isCardNumber(s: string): boolean {
  const t = s.trim();
  return CARD_SHAPE.test(t) && luhn(t.replace(/[ -]/g, ''));
}

const IPV4_PART = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${IPV4_PART}(?:\\.${IPV4_PART}){3}$`);
function isIpv6(s: string): boolean {
  // An address may end in an IPv4 form (::ffff:192.0.2.1), two groups' worth, and carry a zone
  // (fe80::1%eth0).
  let t = s.replace(/%[0-9A-Za-z._~-]+$/, '');
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (dotted) {
    if (!IPV4.test(dotted[1]!)) return false;
    t = `${t.slice(0, -dotted[1]!.length)}0:0`;
  }
  if (!/^[0-9A-Fa-f:]+$/.test(t)) return false;
  const halves = t.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  if (!groups.every((g) => g.length >= 1 && g.length <= 4)) return false;
  // `::` stands for at least one group of zeros.
  return halves.length === 2 ? groups.length < 8 : groups.length === 8;
}
function isIpAddress(s: string): boolean {
  const t = s.trim();
  return IPV4.test(t) || (t.includes(':') && isIpv6(t));
}

/** Why a sent value can never be accepted, or undefined: a string that is a card number or an IP
 *  address. Numbers are not read as card numbers: a 13-digit epoch time in milliseconds would pass
 *  the Luhn check one time in ten. */
export function forbiddenValue(v: FieldValue): ForbiddenKind | undefined {
  if (typeof v !== 'string') return undefined;
  if (isCardNumber(v)) return 'card_number_refused';
  if (isIpAddress(v)) return 'ip_address_refused';
  return undefined;
}

/** A key field's value as one entry (`name=value`; a name has no `=`): how a payment's key values
 *  are stored and looked up. */
export const keyEntry = (name: string, value: string): string => `${name}=${value}`;

/** The entries of the key fields a payment carried, in the declarations' order; undefined when it
 *  carried none. */
export function keyEntries(fields: Readonly<Record<string, FieldValue>> | undefined, declared: Iterable<FieldState>): string[] | undefined {
  if (!fields) return undefined;
  let out: string[] | undefined;
  for (const d of declared) {
    if (!d.key || d.retired) continue;
    const v = fields[d.name];
    if (typeof v === 'string') (out ??= []).push(keyEntry(d.name, v));
  }
  return out;
}
