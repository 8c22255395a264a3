// Where the embedded database finds the files it starts from. A new data directory is made by
// PostgreSQL's initdb (≈ 1.9 s in WebAssembly on a 2-core machine) and then migrated; copying one
// made that way at install time (26 MB, most of it a WAL segment) takes ≈ 0.45 s (unpacking
// PGlite's own tar of it took 1–1.7 s: the writes are the cost). The copy (the template) is
// written by `npm ci` (scripts/db-template.mjs, pglite-template.ts) beside the compiled server in
// dist/, so a new server's first start is quick; without it (a checkout not installed yet) a new
// directory is made by initdb as before. Migrations newer than the template are applied on opening
// as always.

import { fileURLToPath } from 'node:url';

/** The template: a migrated data directory, closed. */
export const TEMPLATE_DIR = fileURLToPath(new URL('../../dist/pglite-template', import.meta.url));
