// `npm ci` (postinstall), after the server is compiled: writes the embedded database's template,
// from which a new data directory starts (src/storage/pglite-files.ts).

import { writeTemplate } from '../dist/storage/pglite-template.js';

await writeTemplate();
