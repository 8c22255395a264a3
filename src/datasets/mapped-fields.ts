// The organization's own fields a dataset's column mapping maps (`mapping.fields`: a declared field
// → the header holding it), read from a CSV's text the way a score request's `fields` are checked
// (app/sent-fields.ts): a cell becomes a value of the field's declared type, or the row is refused,
// naming the row and the column and never the value, since the value may be what must never be
// repeated (a card number or an IP address, domain/fields.ts). History imports store the values
// with each row; scoring a dataset checks them the same way and reads them no further.
//
// A cell, trimmed: empty means the row does not carry the field. A `string` field takes the text
// (at most MAX_FIELD_TEXT characters); a `number` field a plain decimal number (csv.ts NUMBER: no
// currency sign, no thousands separator) that is finite; a `boolean` field true/false, yes/no or
// 1/0 in any case. A card number or an IP address is refused in any field; a number field's digits
// are a number, as a number sent to the API is (a time in milliseconds has 13 digits).

import { forbiddenValue, keyEntries, MAX_FIELD_TEXT, type FieldState, type FieldType, type FieldValue, type ForbiddenKind } from '../domain/fields.ts';
import { fieldEntries, type ColumnMapping } from './column-names.ts';
import { NUMBER, readRowsWithCells, resolveFields } from './csv.ts';

/** A mapped field as a job reads it: the declaration it is read as, and the header it comes from. */
export interface MappedField {
  name: string;
  type: FieldType;
  key: boolean;
  /** The file's header it is read from (what the mapping names, or a header differing from that
   *  only in case and surrounding spaces): what a refusal names. */
  header: string;
}

/** Why a cell cannot be a field's value. */
export type CellRefusal = ForbiddenKind | 'wrong_type' | 'too_long';

// A Map, not an object: a cell such as "constructor" must find nothing.
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['true', true],
  ['false', false],
  ['yes', true],
  ['no', false],
  ['1', true],
  ['0', false],
]);

/** A cell's value as a field of `type`, undefined when the cell is empty, or why it cannot be one. */
export function cellValue(text: string, type: FieldType): FieldValue | undefined | { refused: CellRefusal } {
  if (text === '') return undefined;
  if (type === 'string') {
    const forbidden = forbiddenValue(text);
    if (forbidden) return { refused: forbidden };
    return text.length > MAX_FIELD_TEXT ? { refused: 'too_long' } : text;
  }
  if (type === 'number' && NUMBER.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  if (type === 'boolean') {
    const b = BOOLEANS.get(text.toLowerCase());
    if (b !== undefined) return b;
  }
  // Not of the field's type: a card number or an address is named as such all the same.
  return { refused: forbiddenValue(text) ?? 'wrong_type' };
}

/** The mapping's fields that `declared` (the organization's declarations now) does not hold. */
export function undeclaredFields(mapping: ColumnMapping, declared: Iterable<Pick<FieldState, 'name' | 'retired'>>): [string, string][] {
  const names = new Set<string>();
  for (const d of declared) if (!d.retired) names.add(d.name);
  return fieldEntries(mapping).filter(([name]) => !names.has(name));
}

/** The mapping's fields as declared, each with the header of the file (`headers`, as validation
 *  found them) it is read from; throws when one is not declared (callers check undeclaredFields
 *  first). */
export function mappedFields(mapping: ColumnMapping, declared: readonly FieldState[], headers: readonly string[]): MappedField[] {
  const found = resolveFields(headers, mapping);
  return fieldEntries(mapping).map(([name, header], i) => {
    const d = declared.find((f) => f.name === name && !f.retired);
    if (!d) throw new Error(`fields.${name} is not declared`);
    return { name, type: d.type, key: d.key, header: found[i] ?? header };
  });
}

/** A cell that cannot be its field's value: where it is, and why (never what it holds). */
export class CellRefused extends Error {
  readonly reason: CellRefusal;
  readonly row: number;
  readonly field: MappedField;

  constructor(reason: CellRefusal, row: number, field: MappedField) {
    super(`row ${row}, column "${field.header}" (fields.${field.name}): ${reason}`);
    this.reason = reason;
    this.row = row;
    this.field = field;
  }

  /** The job's error: the row, the column and what is wrong, and what to do; `outcome` says what
   *  did not happen ("nothing was imported"), `then` how to try again ("import that"). A card
   *  number or an IP address starts with its reason code, as the score routes answer it. */
  describe(outcome: string, then: string): string {
    const where = `row ${this.row}, column "${this.field.header}" (fields.${this.field.name})`;
    const again = `upload the file again and ${then}`;
    switch (this.reason) {
      case 'card_number_refused':
        return `card_number_refused: ${where} holds a card number, which this service never accepts; ${outcome}. Put a token from your payment provider, the card's BIN or its last four digits in its place, or leave the cell empty; ${again}.`;
      case 'ip_address_refused':
        return `ip_address_refused: ${where} holds an IP address, which this service never accepts; ${outcome}. Put a keyed hash of the address (an HMAC with a secret of yours) or what you derive from it (a country) in its place, or leave the cell empty; ${again}.`;
      case 'too_long':
        return `${where} is longer than ${MAX_FIELD_TEXT} characters, the most a field's text may have; ${outcome}. Shorten it, or leave the cell empty; ${again}.`;
      case 'wrong_type':
        return `${where} is not ${TYPE_WORDS[this.field.type]}, the field's declared type; ${outcome}. ${TYPE_FIX[this.field.type]}, or leave the cell empty when the row has none; ${again}.`;
    }
  }
}

const TYPE_WORDS: Record<FieldType, string> = { string: 'text', number: 'a number', boolean: 'true or false' };
const TYPE_FIX: Record<FieldType, string> = {
  string: 'Write text',
  number: 'Write a plain number such as 1234.5 (no currency sign, no thousands separator)',
  boolean: 'Write true or false, yes or no, or 1 or 0',
};

/** A row's field values (undefined when it carries none) and its key fields' entries. */
export interface RowFields {
  fields: Record<string, FieldValue> | undefined;
  field_keys: string[] | undefined;
}

/** Reads rows' cells (csv.ts readRowsWithCells, in `mapped`'s order) as their fields' values;
 *  throws CellRefused at the first cell that cannot be its field's value. */
export function fieldReader(mapped: readonly MappedField[]): (cells: readonly string[], row: number) => RowFields {
  const states: FieldState[] = mapped.map((f) => ({ name: f.name, type: f.type, key: f.key, retired: false }));
  return (cells, row) => {
    let fields: Record<string, FieldValue> | undefined;
    for (let i = 0; i < mapped.length; i++) {
      const f = mapped[i]!;
      const v = cellValue(cells[i] ?? '', f.type);
      if (v === undefined) continue;
      if (typeof v === 'object') throw new CellRefused(v.refused, row, f);
      (fields ??= {})[f.name] = v;
    }
    return { fields, field_keys: keyEntries(fields, states) };
  };
}

/** Reads every row's mapped cells of a file that validated; throws CellRefused at the first that
 *  cannot be its field's value. */
export async function checkCells(path: string, mapping: ColumnMapping, mapped: readonly MappedField[]): Promise<void> {
  const read = fieldReader(mapped);
  for await (const { row, cells } of readRowsWithCells(path, mapping)) read(cells, row.row);
}
