// An organization's own fields as the API declares and answers them (/api/organizations/{id}/fields):
// a declaration's request, a field, the organization's fields with their limits, and a field's
// audit. The names' and values' rules are the domain's (domain/fields.ts).

import { z } from 'zod';
import { FIELD_NAME, FIELD_TYPES } from '../domain/fields.ts';
import { storedText } from './stored-text.ts';

export const FieldName = z
  .string()
  .regex(FIELD_NAME, 'a field name is a lowercase letter, then up to 39 lowercase letters, digits or underscores')
  .describe('A lowercase letter, then up to 39 lowercase letters, digits or underscores');

export const FieldDeclarationRequest = z
  .object({
    name: FieldName,
    type: z.enum(FIELD_TYPES).describe('What its values are: `string`, `number` or `boolean`'),
    description: storedText('description', 500).optional(),
    key: z
      .boolean()
      .default(false)
      .describe("A string field whose values have a history of their own (velocity over them, a value's page); at most 5 per organization"),
  })
  .strict();

export const Field = z.object({
  name: z.string(),
  type: z.enum(FIELD_TYPES),
  description: z.string().nullable(),
  key: z.boolean(),
  declared_at: z.string(),
  declared_by: z.string(),
  retired_at: z.string().nullable().describe('Set once retired: rules no longer read it; values already stored stay in the records'),
  retired_by: z.string().nullable(),
});
export type Field = z.infer<typeof Field>;

export const FieldList = z.object({
  data: z.array(Field),
  limits: z
    .object({ fields: z.number().int(), keys: z.number().int() })
    .describe('How many fields, and of them keys, the organization may have declared at once'),
});
export type FieldList = z.infer<typeof FieldList>;

export const FieldAudit = z.object({
  data: z.array(z.object({ at: z.string(), by: z.string(), action: z.string(), detail: z.record(z.string(), z.unknown()).nullable() })),
});
export type FieldAudit = z.infer<typeof FieldAudit>;
