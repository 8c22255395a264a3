// One scored row of a dataset job, as its result file holds it (one JSON object a line) and its
// download has it (one CSV line, the same fields as columns in the same order). Both lines and the
// download's header are written by the addon (native/src/lines.rs, where a row's fields are
// listed once), and the row's type is generated from that list into the addon's index.d.ts: this
// module only names it for the jobs and their readers, so TypeScript never spells the fields again.

export type { ResultRow } from '../addon/addon.ts';
