// `npm ci` (postinstall), after the server is compiled: writes the embedded database's template,
// from which a new data directory starts (TEMPLATE_DIR in src/storage/pglite.ts).

import { writeTemplate } from '../dist/storage/pglite-template.js';

await writeTemplate();
