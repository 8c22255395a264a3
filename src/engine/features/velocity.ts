// Velocity channel: how much is happening right now, per customer, merchant and channel: counts and
// sums of strictly older transactions in short and long windows. Card testing shows up in the
// customer's ten-minute count; a compromised merchant or channel in its hourly and daily volume.

import { channelOf, type History, type HistoryTransaction, type Series } from '../history.ts';

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

export function velocity(tx: HistoryTransaction, history: History, out: Float64Array, at: number): void {
  const series: Record<'customer' | 'merchant' | 'channel', Series> = {
    customer: history.customer(tx.customer_id),
    merchant: history.merchant(tx.merchant_id),
    channel: history.channel(channelOf(tx)),
  };
  let i = at;
  for (const w of WINDOWS) {
    const { count, sum } = series[w.entity].window(tx.time - w.ms, tx.time);
    out[i++] = count;
    out[i++] = sum;
  }
  out[i++] = series.merchant.countBefore(tx.time);
  out[i] = series.channel.countBefore(tx.time);
}
