// The figures a drift verdict goes by and the sentences it is told in (drift.ts), in a module of
// their own that loads nothing: the API's reference (src/contract/drift.ts) quotes them without
// loading the code that reads a model folder.

export const PSI_MODERATE = 0.1;
export const PSI_MAJOR = 0.25;
export const UNSEEN_SHARE = 0.05;
export const OUT_OF_RANGE_SHARE = 0.05;
export const MIN_ROWS_FOR_PSI = 200;
/** Below this many rows there is no report at all. */
export const MIN_ROWS = 20;
/** Fraud and legitimate outcomes each needed before measured performance decides. */
export const MIN_OUTCOMES = 20;
/** Rows a report counts at most: a larger file or week is sampled evenly (every k-th row). PSI over
 *  ten bins is as good as settled at this size. */
export const DRIFT_SAMPLE = 20_000;
/** The sentence every surface shows when the verdict is `shifted`. */
export const DRIFT_WARNING = 'these scores are outside what the model was validated on';
/** The sentence every surface shows when the verdict is `degraded`. */
export const DEGRADED_WARNING = "measured on this data's outcomes, the model does worse than its test figures allow";
