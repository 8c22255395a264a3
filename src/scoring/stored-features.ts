// The features a recorded transaction keeps: every channel's, in a model's channel order, as one
// float32 array (the `features` column, migration 012). A scored transaction keeps those it was
// scored with (scorer.ts), an imported one those it would have had at its own time
// (jobs/imported-features.ts); training, drift and the reports read both alike. A model reads every
// feature of each of its channels, so a channel's row is its whole width.

import type { Channel } from '../domain/channels.ts';
import type { ChannelMatrices } from '../domain/features/extract.ts';

/** Row `row` of `m`, every channel of `channels` in their order, as one float32 array. */
export function storedFeatures(channels: readonly { name: Channel; features: readonly string[] }[], m: ChannelMatrices, row = 0): Float32Array {
  const out = new Float32Array(storedWidth(channels));
  let at = 0;
  for (const c of channels) {
    const width = c.features.length;
    const all = m[c.name];
    // A single row (every score's) is copied whole, without a view to allocate.
    out.set(all.length === width ? all : all.subarray(row * width, (row + 1) * width), at);
    at += width;
  }
  return out;
}

/** How many features a stored row of `channels` holds: every channel's, in their order. */
export function storedWidth(channels: readonly { features: readonly string[] }[]): number {
  return channels.reduce((n, c) => n + c.features.length, 0);
}

/** Where in a stored row of `channels` the customer's, the merchant's and the channel's prior
 *  counts are (the features `History.priors` counts alike: strictly earlier transactions), so
 *  that the cold-start rule reads a stored row as it read the history when the row was scored. */
export function storedPriorOffsets(channels: readonly { features: readonly string[] }[]): { customer: number; merchant: number; channel: number } {
  const at = (name: string) => {
    let offset = 0;
    for (const c of channels) {
      const i = c.features.indexOf(name);
      if (i >= 0) return offset + i;
      offset += c.features.length;
    }
    throw new Error(`the model has no feature ${name}: its stored rows cannot say whether the cold-start rule held`);
  };
  return { customer: at('customer_prior_count'), merchant: at('merchant_prior_count'), channel: at('channel_prior_count') };
}

/** Whether two models read the same features in the same order: one's stored row is then the
 *  other's too (a custom model keeps its base model's features). */
export function sameFeatures(
  a: { channels: readonly { features: readonly string[] }[] },
  b: { channels: readonly { features: readonly string[] }[] },
): boolean {
  return (
    a.channels.length === b.channels.length &&
    a.channels.every((c, k) => c.features.length === b.channels[k]!.features.length && c.features.every((f, i) => f === b.channels[k]!.features[i]))
  );
}
