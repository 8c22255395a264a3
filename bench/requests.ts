// The score requests every HTTP benchmark sends: amounts, customers and merchants of the example
// history's shape (2,000 customers, 400 merchants), cycled deterministically so that every run and
// every benchmark sends the same bodies, explanations on. `newTransaction` adds a transaction id of
// its own to each, for API-key scoring, where the organization records every request; `fields`, the
// organization's own fields of each (bench:rules' fields part), from the customer's number.

const customers = Array.from({ length: 2000 }, (_, i) => `C${String(i + 1).padStart(6, '0')}`);
const merchants = Array.from({ length: 400 }, (_, i) => `M${String(i + 1).padStart(5, '0')}`);
const cities = ['Lisbon', 'Porto', 'Madrid', 'Paris', 'Berlin', 'Rome'];
const types = ['card_present', 'card_not_present', 'wallet', 'bank_transfer'];

/** A sequence of request bodies, from its own counters; `recorded` counts the transaction ids made,
 *  `prefix-1`, `prefix-2`, … (a caller that sends several sequences to one organization gives each
 *  its own prefix, or the later ones would be idempotent replays of the first). */
export function scoreRequests(
  prefix = 'bench',
  fields?: (customer: number, k: number) => string,
): { body: () => string; newTransaction: () => string; recorded: () => number } {
  let k = 0;
  let recorded = 0;
  const body = () => {
    k++;
    const customer = (k * 31) % customers.length;
    const json = JSON.stringify({
      amount: Math.round((5 + ((k * 7919) % 400)) * 100) / 100,
      customer_id: customers[customer],
      merchant_id: merchants[(k * 17) % merchants.length],
      location: cities[k % cities.length],
      payment_type: types[k % types.length],
      explain: true,
    });
    // The fields as JSON text, made once per value by the caller: the client's own work per
    // request stays what it is without them.
    return fields ? `${json.slice(0, -1)},"fields":${fields(customer, k)}}` : json;
  };
  const newTransaction = () => {
    const b = body();
    return `${b.slice(0, -1)},"transaction_id":"${prefix}-${++recorded}"}`;
  };
  return { body, newTransaction, recorded: () => recorded };
}
