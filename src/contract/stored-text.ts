// The rules of a text field the service stores, shared by every request schema: each validates a
// request and documents it in the OpenAPI reference, so the reference's pattern and lengths are
// the checks themselves. docs/integrating.md records them.

import { z } from 'zod';

/** Text that is stored: PostgreSQL's text cannot hold a NUL character, so none is accepted. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL character is what this rejects
export const NO_NUL = /^[^\u0000]*$/;
/** A character other than the white space `trim()` removes, spelled out rather than `\S`: the
 *  reference's pattern is read by other regular-expression engines (Python's, in schemathesis),
 *  whose `\s` is another set. */
export const NOT_ONLY_SPACE = /[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;
/** Stored text is trimmed, then must not be empty: so text of white space alone is refused, and the
 *  reference says so with a pattern (NOT_ONLY_SPACE) beside `minLength`, which white space alone
 *  would meet. (The pattern is tested after the trim, where it can only fail with the length,
 *  which stops the checks first: one problem per field.) */
export const storedText = (what: string, max: number) =>
  z
    .string()
    .trim()
    .min(1, { message: `${what} must not be empty or white space only`, abort: true })
    .max(max, `${what} is at most ${max} characters`)
    .regex(NO_NUL, `${what} must not contain a NUL character`)
    .regex(NOT_ONLY_SPACE, `${what} must not be white space only`);
