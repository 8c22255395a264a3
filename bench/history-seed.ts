// The rows bench:history seeds: one organization's last 30 days of realistic payments, every value a
// function of the row's number, so the same command makes the same rows on either database.
// Kept apart from the benchmark so an in-process probe of a load can seed the same rows, and its key
// fields part the same rows with three key fields' values each (bench/field-values.ts).

import { CITIES, PAYMENT_TYPES } from '../src/domain/simulate.ts';
import { withoutSecondaryIndexes } from './database.ts';
import { CITY_COUNTRIES, COUNTRIES, DOMAINS, SHARED_DEVICE_EVERY } from './field-values.ts';

const DAY = 86_400_000;

// Every value is a function of the row's number x (0 the oldest) or of its customer or merchant
// number, through hashint8extended with a salt of its own: the same command makes the same rows on
// either database, in time order (the order a history is recorded in, so the table's heap follows
// time as a real one does), with no lookup tables. `OFFSET 0` keeps each level a level of its own:
// flattened, every use of a column would compute its expression again.
const MASK52 = 4503599627370495;
/** A uniform number in (0, 1) from `expr` and a salt. */
const U = (expr: string, salt: number) => `((hashint8extended(${expr}, ${salt}) & ${MASK52})::float8 + 0.5) / ${MASK52 + 1}.0`;
/** A standard normal number (Box–Muller). */
const Z = (expr: string, salt: number) => `(sqrt(-2 * ln(${U(expr, salt)})) * cos(2 * pi() * ${U(expr, salt + 1)}))`;
/** A whole number from 0 to `n`−1. */
const H = (expr: string, salt: number, n: number) => `((hashint8extended(${expr}, ${salt}) & 9223372036854775807) % ${n})`;
/** One of `n` entities, rank r drawn with a weight growing as a lognormal's quantile of r
 *  (exp(σ·Φ⁻¹(r))): r = Φ(z + σ) for a standard normal z has exactly that density. Φ is
 *  approximated by a logistic, so the weights are lognormal-like: a long tail of heavy entities. */
const PICK = (n: number, sigma: number, expr: string, salt: number) =>
  `least(${n - 1}, floor(${n} / (1 + exp(-1.702 * (${Z(expr, salt)} + ${sigma})))))::bigint`;

/** Customers' weights: σ 0.75 puts the median customer at about 15 payments a month for a mean of
 *  20, a few percent above 60. */
const CUSTOMER_SIGMA = 0.75;
/** Merchants' weights: σ 1 spreads a mean of 1,000 payments a month from tens to several thousand. */
const MERCHANT_SIGMA = 1.0;
const FRAUD_RATE = 0.02;

/** One INSERT … SELECT of rows number $3 to $4 (of `n`) for organization $1, their newest time $2;
 *  `keys`: each row with the values of three key fields (`field_keys`, as a payment that carried
 *  them is recorded): its customer's device, e-mail domain and card country. */
export function seedSql(n: number, keys = false): string {
  const customers = Math.max(1, Math.round(n / 20));
  // Merchant m is in city m mod 12, so a city's merchants are picked as a rank within the city.
  const cities = CITIES.length;
  const perCity = Math.max(1, Math.round(n / 1_000 / cities));
  const merchants = perCity * cities;
  const spacing = (30 * DAY - 60_000) / n;
  const list = (xs: readonly string[]) => `(ARRAY[${xs.map((x) => `'${x}'`).join(',')}])`;
  return `
  INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, label, label_known_ms${keys ? ', field_keys' : ''})
  SELECT $1, 'pay_' || substr(md5('bench-history:' || x), 1, 20), t,
         greatest(0.5, round((spend * exp(0.5 * ${Z('m', 60)}) * exp(0.45 * ${Z('x', 62)}))::numeric, 2)::float8),
         'cus_' || substr(md5('customer:' || c), 1, 14), 'acct_' || substr(md5('merchant:' || m), 1, 16),
         ${list(CITIES)}[1 + CASE WHEN pt = 0 THEN m % ${cities} ELSE home END],
         ${list(PAYMENT_TYPES)}[1 + pt],
         'import',
         CASE WHEN known <= $2::float8 THEN fraud END, CASE WHEN known <= $2::float8 THEN known END${
           keys
             ? `,
         ${keyValues()}`
             : ''
         }
  FROM (
    SELECT x, t, c, home, spend, pt, fraud,
           -- A favourite is in the customer's city 85 % of the time, another merchant 70 %.
           CASE WHEN CASE WHEN fav THEN ${U('c * 8 + k', 32)} < 0.85 ELSE ${U('x', 33)} < 0.7 END
                THEN home + ${cities} * ${PICK(perCity, MERCHANT_SIGMA, 'CASE WHEN fav THEN c * 8 + k ELSE x END', 40)}
                ELSE ${PICK(merchants, MERCHANT_SIGMA, 'CASE WHEN fav THEN c * 8 + k ELSE x END', 42)} END AS m,
           -- Fraud is reported by chargeback, weeks later; a legitimate outcome within days.
           floor(t + CASE WHEN fraud = 1 THEN 5 + 25 * ${U('x', 71)} ELSE 1 + 4 * ${U('x', 71)} END * ${DAY}::float8) AS known
    FROM (
      SELECT x, t, c, home, spend,
             -- 85 % of a customer's payments go to its favourites (3 to 8), the first most often.
             ${U('x', 30)} < 0.85 AS fav,
             floor((3 + ${H('c', 21, 6)}) * power(${U('x', 31)}, 2))::bigint AS k,
             -- The customer's usual payment type 85 % of the time (card present 55 %, not present
             -- 25 %, wallet 13 %, bank transfer 7 %, as the simulator's customers).
             CASE WHEN ${U('x', 50)} < 0.85
                  THEN CASE WHEN ${U('c', 24)} < 0.55 THEN 0 WHEN ${U('c', 24)} < 0.8 THEN 1 WHEN ${U('c', 24)} < 0.93 THEN 2 ELSE 3 END
                  ELSE ${H('x', 51, 4)} END AS pt,
             (${U('x', 70)} < ${FRAUD_RATE})::int AS fraud
      FROM (
        SELECT x, floor($2::float8 - ${30 * DAY}::float8 + (x + ${U('x', 1)}) * ${spacing}::float8) AS t,
               ${PICK(customers, CUSTOMER_SIGMA, 'x', 10)} AS c
        FROM generate_series($3::bigint, $4::bigint) AS x OFFSET 0) AS a,
      LATERAL (SELECT ${H('c', 20, cities)} AS home, exp(3 + 0.7 * ${Z('c', 22)}) AS spend) AS who OFFSET 0) AS b OFFSET 0) AS r`;
}

/** A row's key values, from its customer `c` (and home city `home`) and row number `x`: the device
 *  (its neighbour's for one customer in SHARED_DEVICE_EVERY; a second one for a quarter of the
 *  payments of a third of customers), 32 hex digits; the e-mail domain, of DOMAINS with lognormal-like
 *  weights (the first few most customers'); the card's country, the home city's for 90 % of
 *  customers, else one of COUNTRIES. */
function keyValues(): string {
  const list = (xs: readonly string[]) => `(ARRAY[${xs.map((x) => `'${x}'`).join(',')}])`;
  const owner = `CASE WHEN ${H('c', 80, SHARED_DEVICE_EVERY)} = 0 THEN greatest(0, c - 1) ELSE c END`;
  const slot = `CASE WHEN ${H('c', 81, 3)} = 0 AND ${U('x', 82)} < 0.25 THEN 1 ELSE 0 END`;
  const domain = `${list(DOMAINS)}[${DOMAINS.length} - ${PICK(DOMAINS.length, 1.5, 'c', 83)}]`;
  const country = `CASE WHEN ${U('c', 84)} < 0.9 THEN ${list(CITY_COUNTRIES)}[1 + home] ELSE ${list(COUNTRIES)}[${COUNTRIES.length} - ${PICK(COUNTRIES.length, 1.0, 'c', 85)}] END`;
  return `ARRAY['device_hash=' || substr(md5('device:' || (${owner}) || ':' || (${slot})), 1, 32), 'email_domain=' || ${domain}, 'bin_country=' || ${country}]`;
}

/** Runs one statement on the database being seeded. */
export type Run = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Rows per INSERT statement: each statement's triggers aggregate its rows once. */
const CHUNK = 250_000;

/** Stores `n` rows of `organizationId`, oldest first, the newest at `now` (with key values:
 *  `keys`), without the secondary indexes during the load (bench/database.ts); the totals'
 *  triggers run as for any import. `stored` is told after each statement. */
export async function seed(
  run: Run,
  organizationId: string,
  n: number,
  now: number,
  o: { keys?: boolean; stored?: (rows: number) => void } = {},
): Promise<void> {
  const sql = seedSql(n, o.keys);
  await withoutSecondaryIndexes(
    (text) => run(text),
    '256MB',
    async () => {
      for (let lo = 0; lo < n; lo += CHUNK) {
        await run(sql, [organizationId, now, lo, Math.min(n, lo + CHUNK) - 1]);
        o.stored?.(Math.min(n, lo + CHUNK));
      }
    },
  );
}
