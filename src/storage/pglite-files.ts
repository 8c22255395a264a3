// Where the embedded database finds the files it starts from. Running PostgreSQL's initdb in
// WebAssembly and migrating is slow, so a new data directory starts as a copy of one made that way
// at install time (the template), written by `npm ci` (scripts/db-template.mjs,
// pglite-template.ts) beside the compiled server in dist/; the copy is plain file writes, not
// PGlite's own tar. Without a template (a checkout not installed yet) a new directory is made by
// initdb. Migrations newer than the template are applied on opening. Timings: bench/README.md.

import { fileURLToPath } from 'node:url';

/** The template: a migrated data directory, closed. */
export const TEMPLATE_DIR = fileURLToPath(new URL('../../dist/pglite-template', import.meta.url));
