// The functions a rule's expression can call, with an example each, and the CEL type an
// organization's own field is read as (`fields.<name>`, docs/rules.md), for the editor's reference
// beside the text box (the built-in fields are the service's own list, src/domain/rules/fields.ts).
// No DOM.

import type { FieldType } from '../../../../src/domain/fields.ts';

/** The CEL type a rule reads a declared field as: a number is a double (compare with 10.0). */
export const FIELD_CEL_TYPES: Record<FieldType, string> = { string: 'string', number: 'double', boolean: 'bool' };

/** The functions beyond CEL's operators that the editor names, with an example each. */
export const RULE_FUNCTIONS: readonly { name: string; example: string; about: string }[] = [
  {
    name: 'in_list',
    example: 'in_list("blocked_customers", customer_id)',
    about: 'Whether the named list has the value at the time of the transaction (create lists on the Lists page).',
  },
  {
    name: 'startsWith, endsWith, contains',
    example: 'customer_id.startsWith("test-")',
    about: 'Compare text; regular expressions (matches) are not available, since one can take unbounded time.',
  },
  { name: 'in', example: 'location in ["NG", "GH"]', about: 'Whether a value is one of a few written in the rule.' },
];
