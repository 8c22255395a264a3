// The payment types and locations a model knows, and the note a score adds for a value it does not:
// one definition for the scorer and for GET /api/risk/known-values, which lists them so that a
// caller can map its own values onto them. Payment types: those the tabular channel codes
// (domain/features/tabular.ts); any other is scored like a missing one. Locations: those of the
// model's training data, as its drift reference (reference.json) recorded them; the model keeps no
// list of places, so a location it never saw counts only through whether the customer used it
// before and through its channel's history. A model folder without a reference knows no places, so
// no location is named then. The check runs on every score: a Set lookup per field, nothing
// allocated while the value is known.

import { PAYMENT_TYPE_CODES } from '../domain/features/tabular.ts';
import { UNKNOWN } from '../domain/transaction.ts';
import type { ModelBundle } from '../model/bundle-types.ts';

/** Characters of a value a note quotes; a longer one is cut and marked with "…". */
export const MAX_QUOTED_CHARS = 40;

/** A value as a note quotes it: JSON-escaped (quotes, backslashes and control characters cannot
 *  break the sentence or a log line) and at most MAX_QUOTED_CHARS characters. */
export function quoted(value: string): string {
  if (value.length <= MAX_QUOTED_CHARS) return JSON.stringify(value);
  let cut = value.slice(0, MAX_QUOTED_CHARS);
  // Not half of a character outside the Basic Multilingual Plane.
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${JSON.stringify(cut)}…`;
}

export class KnownValues {
  readonly paymentTypes: ReadonlySet<string>;
  /** Undefined when the model folder has no drift reference. */
  readonly locations: ReadonlySet<string> | undefined;

  constructor(bundle: ModelBundle) {
    this.paymentTypes = new Set(PAYMENT_TYPE_CODES);
    this.locations = bundle.reference?.categories.location;
  }

  /** Adds a note for each value given that the model does not know. A value left out (or sent as
   *  "unknown", as a left-out one is recorded) has a note of its own. */
  note(input: { payment_type?: string | undefined; location?: string | undefined }, notes: string[]): void {
    const p = input.payment_type;
    if (p !== undefined && p !== UNKNOWN && !this.paymentTypes.has(p)) {
      notes.push(
        `payment_type ${quoted(p)} is not a value the model knows: scored as unknown, like a missing one; map your values onto GET /api/risk/known-values.`,
      );
    }
    const l = input.location;
    if (l !== undefined && l !== UNKNOWN && this.locations !== undefined && !this.locations.has(l)) {
      notes.push(
        `location ${quoted(l)} is not a value the model knows (not among the places of its training data): it counts only through whether the customer used it before and through its channel's history; map your values onto GET /api/risk/known-values.`,
      );
    }
  }
}
