// The functions a rule's expression can call, with an example each, for the editor's reference
// beside the text box (the fields are the service's own list, src/domain/rules/fields.ts). No DOM.

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
