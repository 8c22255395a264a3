// `npm run model:create -- --organization ORG --name NAME [--settings FILE.json]`: makes a custom
// model for an organization (custom.ts): the built-in model of MODEL_DIR with the settings given
// (stack weights and bias, thresholds per mode, bands; anything left out keeps the base's value).
// It uses the server's storage configuration (DATABASE_URL, or the embedded database in DATA_DIR,
// which the server must not have open at the same time). Prints the model as one JSON line; an
// owner then activates it with POST /api/models/{id}/activate.
//
// Example settings file: {"thresholds": {"balanced": {"review": 0.2, "block": 0.6}}, "stack": {"weights": {"graph": 1.5}}}

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { randomId } from '../auth/secrets.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../storage/db.ts';
import { insertCustomModel, organizationExists } from '../storage/models-store.ts';
import { isProblem, loadModelFolder } from './bundle.ts';
import { CustomSettingsInput, mergeSettings } from './custom.ts';

function fail(message: string): never {
  process.stderr.write(`model:create: ${message}\n`);
  process.exit(2);
}

const { values } = parseArgs({
  options: { organization: { type: 'string' }, name: { type: 'string' }, settings: { type: 'string' } },
  strict: true,
});
if (!values.organization || !values.name) fail('usage: npm run model:create -- --organization ORG_ID --name NAME [--settings FILE.json]');

let input: CustomSettingsInput = {};
if (values.settings) {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(values.settings, 'utf8'));
  } catch (e) {
    fail(`cannot read ${values.settings} as JSON: ${(e as Error).message}`);
  }
  const parsed = CustomSettingsInput.safeParse(raw);
  if (!parsed.success) fail(`settings: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`);
  input = parsed.data;
}

const config = loadConfig();
const base = loadModelFolder(config.MODEL_DIR);
if (isProblem(base)) fail(base.message);
let settings;
try {
  settings = mergeSettings(base.file, input);
} catch (e) {
  fail(`settings do not make a consistent model: ${(e as { issues?: { message: string }[] }).issues?.map((i) => i.message).join('; ') ?? (e as Error).message}`);
}

const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR }).catch((e: Error) => fail(e.message));
try {
  if (!(await organizationExists(db, values.organization))) fail(`no organization ${values.organization} (list yours with GET /api/organizations)`);
  const model = await insertCustomModel(db, { id: randomId('model'), organizationId: values.organization, name: values.name, baseModelId: base.file.id, settings });
  process.stdout.write(`${JSON.stringify({ id: model.id, organization_id: model.organization_id, name: model.name, base_model_id: model.base_model_id, active: model.active, settings: model.settings })}\n`);
} finally {
  await db.close();
}
