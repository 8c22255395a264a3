// The features a recorded transaction keeps: every channel's, in a model's channel order, as one
// float32 array (the `features` column, migration 012). A scored transaction keeps those it was
// scored with (scorer.ts), an imported one those it would have had at its own time
// (jobs/imported-features.ts); training, drift and the reports read both alike. A model reads every
// feature of each of its channels, so a channel's row is its whole width.

import type { Channel } from '../domain/channels.ts';
import type { ChannelMatrices } from '../domain/features/extract.ts';

/** Row `row` of `m`, every channel of `channels` in their order, as one float32 array. */
export function storedFeatures(channels: readonly { name: Channel; features: readonly string[] }[], m: ChannelMatrices, row = 0): Float32Array {
  const out = new Float32Array(channels.reduce((n, c) => n + c.features.length, 0));
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
