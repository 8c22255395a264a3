// The four channels of evidence, in one definition: the model has one booster per channel, the
// score response one score and one attribution per channel, the download one score column per
// channel, and everything that lists them takes this order (the model folder's order).
// - tabular: the payment itself (amount, payment type, location, time of day);
// - behavioral: the customer against their own past;
// - velocity: counts and sums per customer, merchant and channel in short and long windows;
// - graph: what the shared-entity graph knows (fraud rates from known labels, rings, degrees).

export const CHANNELS = ['tabular', 'behavioral', 'velocity', 'graph'] as const;
export type Channel = (typeof CHANNELS)[number];

/** One value per channel. */
export type PerChannel<T> = Record<Channel, T>;
