-- An organization made from the command line (`npm run org:create -- --owner-email E`) before its
-- owner has ever signed in: the owner is known only by e-mail, since a user's id is the identity
-- provider's subject, learnt at the first sign-in. That sign-in, with a verified e-mail equal to
-- this one (compared without case), joins the organization with the role here and removes the row.

CREATE TABLE organization_invitations (
  organization_id text NOT NULL REFERENCES organizations (id),
  email           text NOT NULL,
  role            text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, email)
);

CREATE INDEX organization_invitations_email_idx ON organization_invitations (email);
