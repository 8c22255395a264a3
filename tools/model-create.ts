// `npm run model:create -- --organization ORG --name NAME [--settings FILE.json]` (`--help` lists
// them): makes a custom model for an organization (custom.ts): the built-in model of MODEL_DIR with
// the settings given (stack weights and bias, thresholds per mode, bands; anything left out keeps
// the base's value). It uses the server's storage configuration (DATABASE_URL, or the embedded
// database in DATA_DIR, which the server must not have open at the same time). Prints the model as
// one JSON line; an owner then activates it with POST /api/models/{id}/activate. The settings file
// is read and checked with the other options, before anything is opened, so a missing or malformed
// one is a usage error (command-line.ts) like a mistyped option.
//
// Example settings file: {"thresholds": {"balanced": {"review": 0.2, "block": 0.6}}, "stack": {"weights": {"graph": 1.5}}}

import { readFileSync } from 'node:fs';
import { randomId } from '../src/app/access/secrets.ts';
import { commandLine, existingFile, required, text, UsageError, type Option } from '../src/command-line.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/storage/open.ts';
import { storeCustomModel } from '../src/app/custom-models.ts';
import { AppError } from '../src/app/errors.ts';
import { loadModelFolder } from '../src/model/bundle.ts';
import { isProblem } from '../src/model/bundle-types.ts';
import { type CustomSettings, CustomSettingsInput, mergeSettings } from '../src/model/custom.ts';

function fail(message: string): never {
  process.stderr.write(`npm run model:create: ${message}\n`);
  process.exit(2);
}

/** `--settings FILE.json`, read and checked with the other options, before anything is opened. */
const settingsOption: Option<CustomSettingsInput> = {
  value: 'FILE.json',
  description: "stack weights and bias, thresholds per mode, bands (default: the base model's)",
  absent: {},
  parse: (raw) => {
    existingFile('FILE.json', '').parse(raw); // the usual "no such file"
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(raw, 'utf8'));
    } catch (e) {
      throw new UsageError(`${raw}: not JSON (${(e as Error).message})`);
    }
    const parsed = CustomSettingsInput.safeParse(json);
    if (!parsed.success)
      throw new UsageError(`${raw}: invalid settings: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`);
    return parsed.data;
  },
};

const values = commandLine({
  name: 'model:create',
  about: 'Makes a custom model for an organization: the base model (MODEL_DIR) with the settings given.',
  options: {
    organization: required(text('ORG_ID', 'the organization the model is for (GET /api/organizations lists yours)')),
    name: required(text('NAME', "the model's name")),
    settings: settingsOption,
  },
  notes: [
    "Storage as the server's: DATABASE_URL, or the embedded database in DATA_DIR (not open in a server meanwhile).",
    'Example settings: {"thresholds": {"balanced": {"review": 0.2, "block": 0.6}}, "stack": {"weights": {"graph": 1.5}}}',
  ],
});
const input = values.settings;

const config = loadConfig();
const base = loadModelFolder(config.MODEL_DIR);
if (isProblem(base)) fail(base.message);
let settings: CustomSettings;
try {
  settings = mergeSettings(base.file, input);
} catch (e) {
  fail(
    `settings do not make a consistent model: ${(e as { issues?: { message: string }[] }).issues?.map((i) => i.message).join('; ') ?? (e as Error).message}`,
  );
}

const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR }).catch((e: Error) => fail(e.message));
try {
  const model = await storeCustomModel(db, {
    id: randomId('model'),
    organizationId: values.organization,
    name: values.name,
    baseModelId: base.file.id,
    settings,
  }).catch((e: unknown) => {
    if (e instanceof AppError && e.reason === 'not_found') fail(`no organization ${values.organization} (list yours with GET /api/organizations)`);
    throw e;
  });
  process.stdout.write(
    `${JSON.stringify({ id: model.id, organization_id: model.organization_id, name: model.name, base_model_id: model.base_model_id, active: model.active, settings: model.settings })}\n`,
  );
} finally {
  await db.close();
}
