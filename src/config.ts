// The service's configuration, read once from the environment (the limits and sign-in
// variables of README, Configuration) and validated with zod, so that a bad value stops the start
// with the variable's name and what it should look like, instead of misbehaving later.
// `publicConfig` is the part a browser may see (`GET /api/config`): limits and whether sign-in
// exists, never a secret.

import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');
const optional = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optional,
  /** On PostgreSQL, the longest one statement may run (or wait for a lock) before the server
   *  cancels it and the request fails with `database_timeout`, instead of holding it for ever. */
  DATABASE_STATEMENT_TIMEOUT_SECONDS: z.coerce.number().positive().default(60),
  /** The longest a request waits for the database before it is answered 503
   *  `database_unavailable` with Retry-After and its statement is cancelled: scoring (the v1 and
   *  sandbox score routes, and the group commit that records a score), uploads and exports
   *  (`TRANSFER`), and every other request. */
  SCORE_DEADLINE_SECONDS: z.coerce.number().positive().default(2),
  TRANSFER_DEADLINE_SECONDS: z.coerce.number().positive().default(120),
  DATABASE_DEADLINE_SECONDS: z.coerce.number().positive().default(5),
  MODEL_DIR: z.string().default('models/builtin'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_UPLOAD_MB: positiveInt(25),
  MAX_DATASET_ROWS: positiveInt(100_000),
  MAX_TRAINING_ROWS: positiveInt(200_000),
  MAX_RUNNING_JOBS: positiveInt(2),
  MAX_JOBS_PER_ORG_PER_DAY: positiveInt(20),
  UPLOAD_RETENTION_HOURS: z.coerce.number().positive().default(24),
  SCORE_RATE_PER_MINUTE: positiveInt(120),
  UPLOAD_RATE_PER_MINUTE: positiveInt(10),
  /** A running job whose process has not written a heartbeat for this long is taken up again. */
  JOB_STALE_SECONDS: z.coerce.number().positive().default(30),
  /** How often each process looks for cases past their due time (each is announced once, by one
   *  process: `case.sla_breached`). */
  CASE_SLA_SWEEP_SECONDS: z.coerce.number().positive().default(60),
  /** The longest a stop (SIGTERM, SIGINT) may take before the process exits, whatever its log
   *  destination does. */
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().default(10),
  /** `commit`: a score's response is sent once its transaction and decision are committed;
   *  `write_behind`: at once, stored within 25 ms. */
  DURABILITY: z.enum(['commit', 'write_behind']).default('commit'),
  /** Server processes `npm start` runs on one port (more than one needs DATABASE_URL). */
  WEB_CONCURRENCY: positiveInt(1),
  /** The longest a request may take to arrive, headers and body, before it is answered 408 and its
   *  connection closed: sized for a MAX_UPLOAD_MB upload (25 MB) over a slow link (≈ 0.7 Mbit/s). */
  REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(300),
  /** Largest JSON body accepted, bytes (a score request is a few hundred bytes). */
  MAX_JSON_BODY_BYTES: positiveInt(64 * 1024),
  /** Rules per organization (deleted ones do not count), and items on its lists at once. */
  MAX_RULES_PER_ORG: positiveInt(200),
  MAX_LIST_ITEMS_PER_ORG: positiveInt(1_000_000),
  /** Lets webhook endpoints reach private, loopback and link-local addresses, and plain http on
   *  loopback (tests and development only: otherwise a URL must be https to public addresses). */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: flag,
  AUTHPROVIDER_URL: optional,
  /** Where this server fetches the provider's key set when it cannot reach it at AUTHPROVIDER_URL
   *  (a provider in the same container composition, known there by another name); the tokens'
   *  issuer is still AUTHPROVIDER_URL's. */
  AUTHPROVIDER_JWKS_URL: optional.pipe(z.url({ protocol: /^https?$/ }).optional()),
  AUTHPROVIDER_ANON_KEY: optional,
  AUTHPROVIDER_JWT_SECRET: optional,
  SESSION_SECRET: optional,
  SESSION_TTL_HOURS: z.coerce.number().positive().default(168),
  /** Ask the hosted project who a token belongs to when it cannot be verified locally (one round
   *  trip per sign-in; off by default, as the specification says). */
  AUTH_USER_FALLBACK: flag,
  ENVIRONMENT: z.string().default('development'),
  COOKIE_SECURE: flag,
  COOKIE_DOMAIN: optional,
  FRONTEND_URL: optional,
  BACKEND_URL: optional,
  CORS_ORIGINS: optional,
});

export type Config = z.output<typeof EnvSchema> & {
  /** Sign-in works: an identity provider, and a secret to hash sessions with (SESSION_SECRET, or on
   *  the embedded database its own, storage/server-secret.ts). */
  authConfigured: boolean;
};

/** Every environment variable the server reads (the README's configuration table lists these). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

export class ConfigError extends Error {
  readonly code = 'config_invalid';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const c = { ...parsed.data, ...overrides };
  if (c.WEB_CONCURRENCY > 1 && !c.DATABASE_URL) {
    throw new ConfigError(
      `invalid configuration: WEB_CONCURRENCY: ${c.WEB_CONCURRENCY} server processes need DATABASE_URL (a PostgreSQL server they share); the embedded database belongs to one process. Set DATABASE_URL, or leave WEB_CONCURRENCY at 1.`,
    );
  }
  return {
    ...c,
    authConfigured: Boolean(c.AUTHPROVIDER_URL && (c.SESSION_SECRET || !c.DATABASE_URL)),
    ...('authConfigured' in overrides ? { authConfigured: overrides.authConfigured! } : {}),
  };
}

/** What `GET /api/config` shows: limits and public switches only. */
const Count = z.number().int().nonnegative();

/** What `GET /api/config` answers: what a browser needs to start, and the limits enforced. */
export const PublicConfig = z.object({
  auth_configured: z.boolean(),
  auth_url: z.string().nullable().describe('The identity provider to sign in with; null without sign-in'),
  auth_anon_key: z.string().nullable().describe("The identity provider's public (anonymous) key, when it needs one"),
  environment: z.string(),
  storage: z.enum(['postgres', 'embedded']),
  limits: z.object({
    max_upload_mb: Count,
    max_dataset_rows: Count,
    max_training_rows: Count,
    max_running_jobs: Count,
    max_jobs_per_org_per_day: Count,
    upload_retention_hours: z.number().nonnegative(),
    score_rate_per_minute: Count,
    upload_rate_per_minute: Count,
    max_json_body_bytes: Count,
    max_rules_per_org: Count,
    max_list_items_per_org: Count,
  }),
});
export type PublicConfig = z.infer<typeof PublicConfig>;

export function publicConfig(c: Config): PublicConfig {
  return {
    auth_configured: c.authConfigured,
    auth_url: c.authConfigured ? c.AUTHPROVIDER_URL! : null,
    auth_anon_key: c.authConfigured ? (c.AUTHPROVIDER_ANON_KEY ?? null) : null,
    environment: c.ENVIRONMENT,
    storage: c.DATABASE_URL ? ('postgres' as const) : ('embedded' as const),
    limits: {
      max_upload_mb: c.MAX_UPLOAD_MB,
      max_dataset_rows: c.MAX_DATASET_ROWS,
      max_training_rows: c.MAX_TRAINING_ROWS,
      max_running_jobs: c.MAX_RUNNING_JOBS,
      max_jobs_per_org_per_day: c.MAX_JOBS_PER_ORG_PER_DAY,
      upload_retention_hours: c.UPLOAD_RETENTION_HOURS,
      score_rate_per_minute: c.SCORE_RATE_PER_MINUTE,
      upload_rate_per_minute: c.UPLOAD_RATE_PER_MINUTE,
      max_json_body_bytes: c.MAX_JSON_BODY_BYTES,
      max_rules_per_org: c.MAX_RULES_PER_ORG,
      max_list_items_per_org: c.MAX_LIST_ITEMS_PER_ORG,
    },
  };
}
