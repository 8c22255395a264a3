-- Accounts: users who signed in through the identity provider (never a provider token), their
-- server-side sessions, organizations with their members, API keys and their daily usage.
-- Secrets are stored only as keyed hashes (HMAC-SHA256 with SESSION_SECRET): a session id, its CSRF
-- token, an API key's secret. A leaked table does not let anyone sign in or score.

CREATE TABLE users (
  id            text PRIMARY KEY,          -- the identity provider's user id (`sub`)
  email         text NULL,
  name          text NULL,
  avatar_url    text NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
  id            text PRIMARY KEY,          -- public handle (never the cookie value)
  secret_hash   text NOT NULL UNIQUE,      -- keyed hash of the cookie value
  csrf_hash     text NOT NULL,             -- keyed hash of the CSRF token
  user_id       text NOT NULL REFERENCES users (id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz NULL
);

CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE organizations (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  stage         text NOT NULL CHECK (stage IN ('test', 'live')),
  created_by    text NOT NULL REFERENCES users (id),
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  organization_id text NOT NULL REFERENCES organizations (id),
  user_id         text NOT NULL REFERENCES users (id),
  role            text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);

CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  prefix          text NOT NULL,           -- sk_test_ or sk_live_
  last4           text NOT NULL,
  secret_hash     text NOT NULL UNIQUE,
  created_by      text NOT NULL REFERENCES users (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  rotated_at      timestamptz NULL,
  last_used_at    timestamptz NULL,
  revoked_at      timestamptz NULL
);

CREATE INDEX api_keys_organization_idx ON api_keys (organization_id, created_at);

CREATE TABLE api_key_usage (
  key_id        text NOT NULL REFERENCES api_keys (id),
  day           date NOT NULL,
  requests      integer NOT NULL DEFAULT 0,
  last_used_at  timestamptz NOT NULL,
  PRIMARY KEY (key_id, day)
);

CREATE INDEX datasets_organization_idx ON datasets (organization_id, created_at);
