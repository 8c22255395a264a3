// `npm run train [-- --data FILE.csv] [--out DIR] [--settings N] [--iterations N] [--seed N] [--feature-groups]`:
// the built-in model's training (src/training/builtin.ts) from the service simulator or a labelled
// CSV, written to DIR (default models/builtin); or `-- --organization ORG_ID [--recalibrate]
// [--as-of ISO_TIME] [--name NAME]`: an organization's challenger from its own traffic
// (src/app/organization-training.ts). A command line only: the model's id never depends on its text.

import { join } from 'node:path';
import { commandLine, existingFile, flag, text, UsageError, wholeNumber } from '../src/command-line.ts';
import { trainBuiltIn } from '../src/training/builtin.ts';
import { DEFAULT_TRAINING } from '../src/training/train.ts';
import { NothingLearned, TooFewFrauds } from '../src/training/organization.ts';
import { trainOrganizationModel } from '../src/app/organization-training.ts';
import { AppError } from '../src/app/errors.ts';
import { loadConfig } from '../src/config.ts';
import { loadModelFolder } from '../src/model/bundle.ts';
import { isProblem } from '../src/model/bundle-types.ts';
import { openDatabase } from '../src/storage/open.ts';

const values = commandLine({
  name: 'train',
  about: 'Trains the model from the service simulator or a labelled CSV and writes its model folder.',
  options: {
    data: existingFile('FILE.csv', 'a labelled CSV in the dataset format, with timestamp and label (default: the service simulator)'),
    out: text('DIR', 'the model folder to write (default models/builtin)', { default: join('models', 'builtin') }),
    settings: wholeNumber(`random settings the search tries after the defaults (default ${DEFAULT_TRAINING.settings})`, {
      default: DEFAULT_TRAINING.settings!,
    }),
    iterations: wholeNumber(`most trees any setting may have (default ${DEFAULT_TRAINING.iterations})`, { min: 1, default: DEFAULT_TRAINING.iterations }),
    seed: wholeNumber(`training seed: LightGBM, the search's draws, the left-out fields (default ${DEFAULT_TRAINING.seed})`, {
      default: DEFAULT_TRAINING.seed,
    }),
    'feature-groups': flag(
      'after the settings search, leave out the feature groups whose absence raises validation average precision and ROC AUC both (off for the built-in model: docs/model.md)',
    ),
    organization: text(
      'ORG_ID',
      'make a model for this organization from its own recorded transactions and outcomes (trees added to the built-in boosters, and its calibration), stored in the database',
    ),
    recalibrate: flag('with --organization: keep the built-in boosters and stack, refit only the calibration on its outcomes'),
    'as-of': {
      value: 'ISO_TIME',
      description: 'with --organization: the moment the data is read as of (outcomes known by then; default now)',
      absent: undefined,
      parse: (raw: string) => {
        const t = Date.parse(raw);
        if (Number.isNaN(t)) throw new UsageError(`--as-of ${raw}: not an ISO 8601 time, e.g. 2026-11-01T00:00:00Z`);
        return t;
      },
    },
    name: text('NAME', 'with --organization: the model\'s name (default: "trained as of …" or "recalibrated as of …")'),
  },
});

if (values.organization !== undefined || values.recalibrate) {
  if (values.organization === undefined) {
    process.stderr.write(
      "npm run train: --recalibrate needs --organization ORG_ID: it refits the built-in model's calibration on one organization's outcomes\n",
    );
    process.exit(2);
  }
  process.exit(
    await trainOrganization({ organization: values.organization, asOf: values['as-of'] ?? Date.now(), name: values.name, recalibrate: values.recalibrate }),
  );
}

/** An organization's challenger, printed: 0, or 2 with the reason on standard error. */
async function trainOrganization(o: { organization: string; asOf: number; name: string | undefined; recalibrate: boolean }): Promise<number> {
  const refuse = (message: string) => {
    process.stderr.write(`npm run train: ${message}\n`);
    return 2;
  };
  const config = loadConfig();
  const base = loadModelFolder(config.MODEL_DIR);
  if (isProblem(base)) return refuse(base.message);
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  try {
    process.stdout.write(`${JSON.stringify(await trainOrganizationModel(db, base, { ...o, modelDir: config.MODEL_DIR }))}\n`);
    return 0;
  } catch (e) {
    if (e instanceof TooFewFrauds || e instanceof NothingLearned || (e instanceof AppError && e.reason === 'not_found')) return refuse(e.message);
    throw e;
  } finally {
    await db.close();
  }
}

const made = await trainBuiltIn({
  data: values.data,
  out: values.out,
  seed: values.seed,
  iterations: values.iterations,
  settings: values.settings,
  featureGroups: values['feature-groups'],
});
console.log(JSON.stringify(made));
