// What a sent field's value may never be: a card number (13–19 digits, spaces or dashes between
// them, passing the Luhn check) or an IP address (v4 or v6); and what stays acceptable beside them
// (tokens, the BIN, the last four, hashes, numbers, order references that fail the Luhn check).

import t from 'tap';
import { FIELD_NAME, forbiddenValue, luhn } from '../../src/domain/fields.ts';

t.test('the Luhn check', async (t) => {
  for (const n of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '4222222222222']) t.ok(luhn(n), n);
  for (const n of ['4111111111111112', '1234567812345678', '378282246310006']) t.notOk(luhn(n), n);
});

t.test('card numbers are refused, written as people write them', async (t) => {
  for (const v of [
    '4111111111111111',
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    ' 5555555555554444 ',
    '378282246310005',
    '3782 822463 10005',
    '6011111111111117',
    '4222222222222',
    '6011000990139424',
  ])
    t.equal(forbiddenValue(v), 'card_number_refused', JSON.stringify(v));
});

t.test('IP addresses are refused, v4 and v6', async (t) => {
  for (const v of [
    '192.0.2.1',
    '10.0.0.255',
    '255.255.255.255',
    '0.0.0.0',
    '2001:db8::1',
    '::1',
    '::',
    'fe80::1%eth0',
    '::ffff:192.0.2.1',
    '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
    ' 203.0.113.9',
  ])
    t.equal(forbiddenValue(v), 'ip_address_refused', JSON.stringify(v));
});

t.test('what is fine beside them', async (t) => {
  for (const v of [
    '411111', // a BIN
    '1111', // the last four
    'tok_4111111111111111x',
    '4111111111111112', // fails the Luhn check
    '41111111111', // too short for a card
    '41111111111111111111', // too long
    '4111  1111 1111 1111', // two spaces: not a way a card number is written
    'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d08c15d65a08a',
    'example.com',
    '256.1.1.1',
    '1.2.3',
    'cafe:babe',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    'NG',
    '',
  ])
    t.equal(forbiddenValue(v), undefined, JSON.stringify(v));
  for (const v of [4111111111111111, 1764345600000, true, false, 0]) t.equal(forbiddenValue(v), undefined, `the number or boolean ${v}`);
});

t.test('field names', async (t) => {
  for (const n of ['bin_country', 'a', 'email_domain', 'x1', 'a'.repeat(40)]) t.match(n, FIELD_NAME, n);
  for (const n of ['', '1abc', 'Email', 'e-mail', '_x', 'a'.repeat(41), 'ünï']) t.notMatch(n, FIELD_NAME, n);
});
