// A suggested column mapping from a file's headers, so that a file exported from somewhere else
// (PaySim's nameOrig and nameDest, a card dataset's Class, a bank's payer and payee) needs a click
// rather than eight choices. Pure and name-based only: it never reads values, and it is only a
// suggestion (validation still uses the caller's mapping, else headers named as our columns).
//
// PaySim's `step` is left out on purpose: it counts hours from the start of the simulation, and a
// numeric timestamp is read as epoch seconds (csv.ts), so mapping it would squeeze a month into a
// quarter of an hour and distort every time-window feature. Without a timestamp, file order is time
// order, which is how PaySim files are sorted anyway.

import { DATASET_COLUMNS, type ColumnMapping, type DatasetColumn } from './csv.ts';

/** Header spellings per column, best first, compared lowercased without spaces, `_`, `-` or `.`. */
const ALIASES: Record<DatasetColumn, string[]> = {
  amount: ['amount', 'amt', 'transactionamount', 'transactionamt', 'txnamount', 'txamount', 'paymentamount', 'value', 'sum'],
  customer_id: [
    'customerid',
    'customer',
    'nameorig',
    'userid',
    'user',
    'payerid',
    'payer',
    'clientid',
    'client',
    'accountid',
    'account',
    'cardholder',
    'ccnum',
    'cardid',
    'sender',
    'senderid',
    'originator',
  ],
  merchant_id: [
    'merchantid',
    'merchant',
    'namedest',
    'payeeid',
    'payee',
    'recipientid',
    'recipient',
    'receiverid',
    'receiver',
    'beneficiary',
    'vendorid',
    'vendor',
    'shopid',
    'shop',
    'storeid',
    'store',
  ],
  transaction_id: ['transactionid', 'transaction', 'txnid', 'txid', 'transid', 'transnum', 'paymentid', 'orderid'],
  timestamp: ['timestamp', 'datetime', 'transdatetranstime', 'transactiontime', 'transactiondate', 'eventtime', 'createdat', 'time', 'date', 'unixtime'],
  location: ['location', 'city', 'country', 'region', 'state', 'merchantcity', 'merchantcountry', 'ipcountry'],
  payment_type: ['paymenttype', 'paymentmethod', 'type', 'transactiontype', 'txntype', 'method', 'channel'],
  label: ['label', 'isfraud', 'fraud', 'isfraudulent', 'fraudulent', 'fraudlabel', 'class', 'target'],
};

const normal = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[\s_.-]+/g, '');

/** For each of our columns, the first header that matches one of its spellings (a header is used
 *  for one column at most; columns earlier in DATASET_COLUMNS choose first). */
export function suggestMapping(headers: readonly string[]): ColumnMapping {
  const byNormal = new Map<string, string>();
  for (const h of headers) if (!byNormal.has(normal(h))) byNormal.set(normal(h), h);
  const taken = new Set<string>();
  const mapping: ColumnMapping = {};
  for (const column of DATASET_COLUMNS) {
    for (const alias of ALIASES[column]) {
      const header = byNormal.get(alias);
      if (header !== undefined && !taken.has(header)) {
        mapping[column] = header;
        taken.add(header);
        break;
      }
    }
  }
  return mapping;
}
