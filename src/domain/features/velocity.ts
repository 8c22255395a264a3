// Velocity channel: how much is happening right now, per customer, merchant and channel: counts and
// sums of strictly older transactions in short and long windows. Card testing shows up in the
// customer's ten-minute count; a compromised merchant or channel in its hourly and daily volume.

import type { History } from '../history/history.ts';
import type { Series } from '../history/series.ts';
import { channelOf, type Transaction } from '../transaction.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const WINDOWS: { entity: 'customer' | 'merchant' | 'channel'; label: string; ms: number }[] = [
  { entity: 'customer', label: '10m', ms: 10 * MINUTE },
  { entity: 'customer', label: '1h', ms: HOUR },
  { entity: 'customer', label: '24h', ms: DAY },
  { entity: 'customer', label: '7d', ms: 7 * DAY },
  { entity: 'customer', label: '30d', ms: 30 * DAY },
  { entity: 'merchant', label: '1h', ms: HOUR },
  { entity: 'merchant', label: '24h', ms: DAY },
  { entity: 'channel', label: '1h', ms: HOUR },
  { entity: 'channel', label: '24h', ms: DAY },
];

export const VELOCITY_FEATURES = [
  ...WINDOWS.flatMap((w) => [`${w.entity}_count_${w.label}`, `${w.entity}_sum_${w.label}`]),
  'merchant_prior_count',
  'channel_prior_count',
] as const;

const ENTITY_INDEX = { customer: 0, merchant: 1, channel: 2 } as const;
/** The windows as (entity index, length), for a loop that makes no objects. */
const WINDOW_ENTITIES = WINDOWS.map((w) => ENTITY_INDEX[w.entity]);
const WINDOW_MS = WINDOWS.map((w) => w.ms);

export function velocity(tx: Transaction, history: History, out: Float64Array, at: number): void {
  const customer = history.customer(tx.customer_id);
  const merchant = history.merchant(tx.merchant_id);
  const channel = history.channel(channelOf(tx));
  let i = at;
  for (let k = 0; k < WINDOW_MS.length; k++) {
    const e = WINDOW_ENTITIES[k]!;
    const series: Series = e === 0 ? customer : e === 1 ? merchant : channel;
    series.windowInto(tx.time - WINDOW_MS[k]!, tx.time, out, i);
    i += 2;
  }
  out[i++] = merchant.countBefore(tx.time);
  out[i] = channel.countBefore(tx.time);
}
