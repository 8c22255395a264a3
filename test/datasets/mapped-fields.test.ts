// The organization's own fields a column mapping maps, read from a CSV's cells
// (datasets/mapped-fields.ts): each type's conversions and refusals (a card number or an IP address
// in a field of any type, text over the limit, a number that is not plain or not finite, a boolean
// that is none of true/false, yes/no, 1/0), an empty cell absent, key entries for the key fields; a
// refusal's message names the row, the file's header and the field, never the value; the rows read
// with their cells (headers matched as our columns are); validation naming a mapped header the file
// lacks; and the rows kept for scoring still used whatever fields the mapping maps.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeptColumns, validateAndKeep } from '../../src/datasets/columns.ts';
import { readRowsWithCells, validateCsv, type ColumnMapping } from '../../src/datasets/csv.ts';
import { CellRefused, cellValue, fieldReader, mappedFields, undeclaredFields, type MappedField } from '../../src/datasets/mapped-fields.ts';
import { tempDir } from '../support/temp.ts';

const dir = tempDir('mapped-fields-');
let n = 0;
const file = (content: string) => {
  const path = join(dir, `f${n++}.csv`);
  writeFileSync(path, content);
  return path;
};

t.test('a cell as each type', async (t) => {
  const cases: [string, 'string' | 'number' | 'boolean', unknown][] = [
    ['', 'string', undefined],
    ['', 'number', undefined],
    ['', 'boolean', undefined],
    ['example.com', 'string', 'example.com'],
    ['x'.repeat(500), 'string', 'x'.repeat(500)],
    ['x'.repeat(501), 'string', { refused: 'too_long' }],
    ['3', 'number', 3],
    ['-2.5', 'number', -2.5],
    ['.5', 'number', 0.5],
    ['1e2', 'number', 100],
    ['1e400', 'number', { refused: 'wrong_type' }],
    ['1,000', 'number', { refused: 'wrong_type' }],
    ['$5', 'number', { refused: 'wrong_type' }],
    ['three', 'number', { refused: 'wrong_type' }],
    ['4111111111111111', 'number', 4111111111111111],
    ['4111 1111 1111 1111', 'number', { refused: 'card_number_refused' }],
    ['203.0.113.9', 'number', { refused: 'ip_address_refused' }],
    ['true', 'boolean', true],
    ['TRUE', 'boolean', true],
    ['Yes', 'boolean', true],
    ['1', 'boolean', true],
    ['false', 'boolean', false],
    ['NO', 'boolean', false],
    ['0', 'boolean', false],
    ['maybe', 'boolean', { refused: 'wrong_type' }],
    ['y', 'boolean', { refused: 'wrong_type' }],
    ['constructor', 'boolean', { refused: 'wrong_type' }],
    ['__proto__', 'boolean', { refused: 'wrong_type' }],
    ['4111111111111111', 'boolean', { refused: 'card_number_refused' }],
    ['4111-1111-1111-1111', 'string', { refused: 'card_number_refused' }],
    ['4111111111111112', 'string', '4111111111111112'],
    ['203.0.113.9', 'string', { refused: 'ip_address_refused' }],
    ['2001:db8::1', 'string', { refused: 'ip_address_refused' }],
    ['::ffff:192.0.2.1', 'boolean', { refused: 'ip_address_refused' }],
  ];
  for (const [text, type, expected] of cases) t.same(cellValue(text, type), expected, `${JSON.stringify(text.slice(0, 30))} as a ${type}`);
});

const FIELDS: MappedField[] = [
  { name: 'email_domain', type: 'string', key: true, header: 'Email' },
  { name: 'items', type: 'number', key: false, header: 'Items' },
  { name: 'three_ds', type: 'boolean', key: false, header: '3DS' },
  { name: 'device', type: 'string', key: true, header: 'Device' },
];

t.test("a row's fields and key entries; a refusal names the place, never the value", async (t) => {
  const read = fieldReader(FIELDS);
  t.same(read(['example.com', '2', 'yes', 'dev-a'], 1), {
    fields: { email_domain: 'example.com', items: 2, three_ds: true, device: 'dev-a' },
    field_keys: ['email_domain=example.com', 'device=dev-a'],
  });
  t.same(read(['', '2', '', ''], 2), { fields: { items: 2 }, field_keys: undefined }, 'no key value: no entries');
  t.same(read(['', '', '', ''], 3), { fields: undefined, field_keys: undefined }, 'every cell empty: no fields');
  for (const [cells, reason, pattern] of [
    [
      ['4111 1111 1111 1111', '', '', ''],
      'card_number_refused',
      /^card_number_refused: row 7, column "Email" \(fields\.email_domain\) holds a card number.*nothing was imported.*import that\.$/,
    ],
    [['', '', '', '10.0.0.1'], 'ip_address_refused', /^ip_address_refused: row 7, column "Device" \(fields\.device\) holds an IP address/],
    [
      ['', 'many', '', ''],
      'wrong_type',
      /^row 7, column "Items" \(fields\.items\) is not a number, the field's declared type; nothing was imported\. Write a plain number/,
    ],
    [['', '', 'perhaps', ''], 'wrong_type', /^row 7, column "3DS" \(fields\.three_ds\) is not true or false/],
    [['z'.repeat(501), '', '', ''], 'too_long', /^row 7, column "Email" \(fields\.email_domain\) is longer than 500 characters/],
  ] as const) {
    try {
      read(cells, 7);
      t.fail(`${reason}: refused`);
    } catch (e) {
      t.ok(e instanceof CellRefused, `${reason}: a CellRefused`);
      const refusal = e as CellRefused;
      t.equal(refusal.reason, reason);
      const message = refusal.describe('nothing was imported', 'import that');
      t.match(message, pattern);
      const value = cells.find((c) => c !== '')!;
      t.notOk(message.includes(value) || refusal.message.includes(value), `${reason}: the value is not in the message`);
    }
  }
});

t.test('the mapping against the declarations', async (t) => {
  const mapping = { fields: { email_domain: 'email', tier: 'Tier' } };
  const declared = [
    { name: 'email_domain', type: 'string' as const, key: true, retired: false },
    { name: 'tier', type: 'string' as const, key: false, retired: true },
  ];
  t.same(undeclaredFields(mapping, declared), [['tier', 'Tier']], 'a retired field is not declared');
  t.same(undeclaredFields({}, declared), [], 'no fields mapped: nothing to declare');
  t.same(
    mappedFields({ fields: { email_domain: 'email' } }, declared, ['Email ', 'x']),
    [{ name: 'email_domain', type: 'string', key: true, header: 'Email ' }],
    "read from the file's own header",
  );
  t.throws(() => mappedFields(mapping, declared, ['email', 'Tier']));
});

t.test('reading and validating a file whose mapping maps fields', async (t) => {
  const path = file(
    'amount,customer_id,merchant_id,timestamp,Email, device ,Items\n5,c1,m1,2026-01-01T00:00:00Z, a.example ,d1,3\n6,c2,m2,2026-01-02T00:00:00Z,,d2,\n',
  );
  const mapping = { fields: { email_domain: 'Email', device: 'DEVICE', items: 'Items' } };
  const rows = [];
  for await (const r of readRowsWithCells(path, mapping)) rows.push([r.row.row, r.row.customer_id, r.cells]);
  t.same(
    rows,
    [
      [1, 'c1', ['a.example', 'd1', '3']],
      [2, 'c2', ['', 'd2', '']],
    ],
    'cells trimmed, in the mapping order, headers matched as our columns are',
  );
  const valid = await validateCsv(path, { mapping, maxRows: 100 });
  t.ok(valid.valid);
  t.same(valid.missing_fields, []);
  const none = await validateCsv(path, { maxRows: 100 });
  t.notOk('missing_fields' in none, 'a mapping without fields: no missing_fields at all');
  const missing = await validateCsv(path, { mapping: { fields: { email_domain: 'E-mail', items: 'Items' } }, maxRows: 100 });
  t.notOk(missing.valid, 'a mapped header the file lacks: not valid');
  t.same(missing.missing_fields, ['email_domain']);
});

t.test('the rows kept for scoring are used whatever fields the mapping maps', async (t) => {
  const path = file('amount,customer_id,merchant_id,Email\n5,c1,m1,a.example\n6,c2,m2,b.example\n');
  const result = await validateAndKeep(path, { mapping: { fields: { email_domain: 'Email' } }, maxRows: 100 });
  t.ok(result.valid);
  for (const mapping of [{}, { fields: { email_domain: 'Email' } }, { fields: { other: 'Email' } }] as ColumnMapping[]) {
    const kept = KeptColumns.open(path, mapping);
    t.ok(kept, `kept rows open for ${JSON.stringify(mapping)}`);
    t.equal(kept?.rows, 2);
    kept?.close();
  }
  t.notOk(KeptColumns.open(path, { customer_id: 'merchant_id' }), 'another mapping of our columns still parses again');
});
