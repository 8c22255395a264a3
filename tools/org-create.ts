// `npm run org:create -- --name NAME [--stage test|live] [--owner-email E]` (`--help` lists them):
// an organization and its first API key, for operators' scripts and for a first try without an
// identity provider. Prints one JSON object, `{ organization_id, api_key, … }`: the key's secret
// is shown this once and stored only as a hash. It uses the server's storage configuration
// (DATABASE_URL, or the embedded database in DATA_DIR, which no running server may hold open at
// the same time) and its key-hashing secret (SESSION_SECRET, or the embedded database's own), so
// the server that opens that storage next accepts the key. With --owner-email the organization
// belongs to whoever signs in with that e-mail (now, if they have before; else at their first
// sign-in), so it can also be managed from the dashboard.

import { commandLine, oneOf, required, text, UsageError, type Option } from '../src/command-line.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/storage/open.ts';
import { sessionSecret } from '../src/storage/server-secret.ts';
import { Accounts } from '../src/app/access/accounts.ts';
import { createOrganizationFromCommandLine } from '../src/app/access/organizations.ts';

function fail(message: string): never {
  process.stderr.write(`npm run org:create: ${message}\n`);
  process.exit(2);
}

/** `--name NAME`: 1–200 characters once trimmed, as the HTTP route takes it. */
const nameOption: Option<string | undefined> = {
  value: 'NAME',
  description: "the organization's name (1–200 characters)",
  absent: undefined,
  parse: (raw) => {
    const name = raw.trim();
    if (name.length < 1 || name.length > 200) throw new UsageError('must be 1–200 characters');
    return name;
  },
};

/** `--owner-email E`: an address, compared without case at sign-in. */
const emailOption: Option<string | undefined> = {
  ...text('E', 'the e-mail its owner signs in with (default: none, the key alone uses it)'),
  parse: (raw) => {
    const email = raw.trim();
    if (!/^[^\s@]{1,64}@[^\s@]{1,253}\.[^\s@]{1,63}$/.test(email)) throw new UsageError(`must be an e-mail address, got ${JSON.stringify(raw)}`);
    return email;
  },
};

const values = commandLine({
  name: 'org:create',
  about: 'Makes an organization and its first API key (the secret is printed once).',
  options: {
    name: required(nameOption),
    stage: oneOf(['test', 'live'] as const, 'test keys (sk_test_…) or live keys (sk_live_…)', { default: 'test' }),
    'owner-email': emailOption,
  },
  notes: [
    "Storage as the server's: DATABASE_URL, or the embedded database in DATA_DIR (stop the server first).",
    'Keys are hashed with SESSION_SECRET; on the embedded database without it, with the secret kept in DATA_DIR.',
  ],
});

const config = loadConfig();
const secret = sessionSecret(config).secret;
if (!secret)
  fail('SESSION_SECRET is not set: on PostgreSQL, keys are hashed with it. Set it to the value the servers use (README, Configuration) and run again.');
const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR }).catch((e: Error) =>
  fail(`${e.message}${config.DATABASE_URL ? '' : ' (is a server running on this DATA_DIR? Stop it first: the embedded database belongs to one process)'}`),
);
try {
  const made = await createOrganizationFromCommandLine(db, new Accounts(db, config, secret), {
    name: values.name,
    stage: values.stage,
    ownerEmail: values['owner-email'],
  });
  process.stdout.write(
    `${JSON.stringify({
      organization_id: made.organization.id,
      name: made.organization.name,
      stage: made.organization.stage,
      api_key: made.secret,
      api_key_id: made.key.id,
      owner: made.owner,
    })}\n`,
  );
} finally {
  await db.close();
}
