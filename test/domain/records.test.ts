// The history's column store gives back exactly the transactions put in: every field, ids that are
// missing, empty or not ASCII, labels and their absence, across many growths of its buffers.

import t from 'tap';
import { RecordStore } from '../../src/domain/history/records.ts';
import { StringTable } from '../../src/domain/history/strings.ts';
import type { Transaction } from '../../src/domain/transaction.ts';

t.test('round trip of every field through growth', async (t) => {
  const store = new RecordStore();
  const put: Transaction[] = [];
  let indexed = 0;
  const ids = [undefined, '', 'T-1', 'ñandú-Ω-交易-🙂', 'x'.repeat(300)];
  for (let i = 0; i < 20_000; i++) {
    const tx: Transaction = {
      time: 1_700_000_000_000 + i * 1000,
      amount: Math.round(i * 37.13) / 100,
      customer_id: `C${i % 97}`,
      merchant_id: `M${i % 13}`,
      location: ['Lisbon', 'Porto', 'São Paulo'][i % 3]!,
      payment_type: ['card_present', 'wallet'][i % 2]!,
    };
    if (i % 3 !== 0) tx.label = (i % 5 === 0 ? 1 : 0) as 0 | 1;
    const id = i < ids.length ? ids[i] : `T${i}`;
    if (id !== undefined) tx.transaction_id = id;
    put.push(tx);
    if (store.push(tx) === i) indexed++;
  }
  t.equal(indexed, put.length, "push returns each transaction's index");
  t.equal(store.length, put.length);
  let same = 0;
  put.forEach((tx, i) => {
    if (JSON.stringify(store.at(i)) === JSON.stringify(tx) && store.time(i) === tx.time) same++;
  });
  t.equal(same, put.length, 'every transaction read back as written');
  t.notOk('transaction_id' in store.at(0)!, 'a missing id stays missing');
  t.equal(store.at(1)!.transaction_id, '', 'an empty id stays empty');
  t.equal(store.at(3)!.transaction_id, 'ñandú-Ω-交易-🙂');
  t.same(store.at(-1), put[put.length - 1], 'negative index from the end');
  t.equal(store.at(put.length), undefined);
});

t.test('an id followed by a transaction without one reads back whole', async (t) => {
  const store = new RecordStore();
  const base = { time: 1, amount: 1, customer_id: 'C', merchant_id: 'M', location: 'L', payment_type: 'wallet' };
  store.push({ ...base, transaction_id: 'first' });
  store.push({ ...base });
  store.push({ ...base, transaction_id: 'third' });
  t.equal(store.transactionId(0), 'first', 'not cut short by the next row having no id');
  t.equal(store.transactionId(1), undefined);
  t.equal(store.transactionId(2), 'third');
});

t.test('a value added as its bytes is found by its string, whatever its length and characters', async (t) => {
  // A load adds names as the bytes it read, a score looks them up as strings: both must hash alike.
  const values = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'cus_0123456789abcd', 'acct_0123456789abcdef', '\0', '\0\0\0\0', 'abcd\0'];
  values.push('é', 'aé', 'abcé', 'São Paulo', '日本語のテキスト', '😀', 'a😀bc', 'x'.repeat(301));
  const table = new StringTable();
  const numbers = values.map((v) => {
    const bytes = Buffer.from(`<${v}>`, 'utf8');
    return table.idBytes(bytes, 1, bytes.length - 1);
  });
  t.equal(new Set(numbers).size, values.length, 'each distinct value numbered once');
  t.same(
    values.map((v) => table.find(v)),
    numbers,
    'each found again by its string',
  );
  t.same(
    values.map((v) => table.id(v)),
    numbers,
    'and not added twice',
  );
  // A lone surrogate is encoded as U+FFFD, as Buffer.from encodes it.
  const lone = Buffer.from('x\ud800', 'utf8');
  const k = table.idBytes(lone, 0, lone.length);
  t.equal(table.find('x\ud800'), k, 'a lone surrogate as its replacement character');
});
