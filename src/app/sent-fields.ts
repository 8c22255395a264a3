// The organization's own fields a payment is sent with (`fields` on a score request), checked before
// anything is scored: a value that is a card number or an IP address is refused whatever the field
// is called, on both score routes, and neither stored nor repeated (domain/fields.ts); a declared
// field's value must have its declared type (422 naming `body.fields.<name>`); a field that is not
// declared is kept with the transaction and named in the answer's notes, never refused, so a
// customer's server that sends a field before it is declared keeps working.

import { forbiddenValue, type FieldState, type FieldValue } from '../domain/fields.ts';
import { AppError } from './errors.ts';

type Sent = Readonly<Record<string, FieldValue>> | undefined;

/** The fields a payment was sent with, or undefined when none: most payments carry none, and then
 *  nothing below allocates. */
export function sentFields(fields: Sent): Readonly<Record<string, FieldValue>> | undefined {
  if (fields === undefined) return undefined;
  for (const _ in fields) return fields;
  return undefined;
}

/** Refuses a payment carrying a card number or an IP address in any field. The answer names the
 *  field, never its value. */
export function refuseForbidden(fields: Sent): void {
  if (!fields) return;
  for (const [name, value] of Object.entries(fields)) {
    const why = forbiddenValue(value);
    if (!why) continue;
    const what = why === 'card_number_refused' ? 'a card number' : 'an IP address';
    throw new AppError(why, `fields.${name} holds ${what}, which this service never accepts: nothing was scored or stored.`, undefined, {
      fields: [{ path: `body.fields.${name}`, message: `fields.${name} holds ${what}` }],
    });
  }
}

/** The sent fields against the organization's declarations: `validation_failed` naming each
 *  declared field whose value has another type; else the note naming those not declared (none:
 *  undefined). */
export function checkDeclared(fields: Sent, declared: ReadonlyMap<string, FieldState>): string | undefined {
  if (!fields) return undefined;
  const wrong: { path: string; message: string }[] = [];
  const undeclared: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const d = declared.get(name);
    if (!d) undeclared.push(name);
    else if (typeof value !== d.type) wrong.push({ path: `body.fields.${name}`, message: `fields.${name} is declared a ${d.type}, not a ${typeof value}` });
  }
  if (wrong.length)
    throw new AppError(
      'validation_failed',
      `${wrong.length === 1 ? 'A field has' : 'Fields have'} a value of another type than declared.`,
      "Send each declared field's value with its type (GET the organization's fields), or leave it out.",
      { fields: wrong },
    );
  return undeclared.length ? `Not declared: ${undeclared.map((n) => `fields.${n}`).join(', ')}: stored, not read by rules.` : undefined;
}

/** The public sandbox's note when fields are sent: it reads none. */
export const SANDBOX_FIELDS_NOTE = "The public sandbox reads no fields: they are an organization's own (POST /api/v1/risk/score).";
