-- Teams: an organization's members have one of two roles, `owner` and `analyst` (what each may do is
-- defined once, in src/app/access/roles.ts). The role called `member` until now is `analyst`: the
-- stored memberships and invitations are renamed here, and the API answers `analyst`.
-- Owners invite people by e-mail (an invitation is claimed at the invitee's first sign-in with that
-- verified e-mail, compared without case), change roles and remove members; every such change, and
-- every invitation claimed, is kept in `membership_audit` (who, when, what), which the owners and
-- analysts read (GET /api/organizations/{id}/members/audit).

ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
UPDATE memberships SET role = 'analyst' WHERE role = 'member';
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'analyst'));

ALTER TABLE organization_invitations DROP CONSTRAINT organization_invitations_role_check;
UPDATE organization_invitations SET role = 'analyst' WHERE role = 'member';
ALTER TABLE organization_invitations ADD CONSTRAINT organization_invitations_role_check CHECK (role IN ('owner', 'analyst'));
-- Who invited: a user id, or the command line's own user (npm run org:create); null for the
-- invitations made before this column.
ALTER TABLE organization_invitations ADD COLUMN invited_by text NULL;

CREATE TABLE membership_audit (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  at              timestamptz NOT NULL DEFAULT now(),
  -- A user id, or `operator:command-line` (npm run org:create).
  by              text NOT NULL,
  action          text NOT NULL CHECK (action IN ('invited', 'invitation_withdrawn', 'joined', 'role_changed', 'removed', 'left')),
  -- Whom the change is about: the member's user id (null while only an invitation exists) and the
  -- e-mail (the invitation's, or the member's as the identity provider last gave it).
  user_id         text NULL,
  email           text NULL,
  -- The role after the change (for `removed` and `left`, the role they had), and before it for
  -- `role_changed`.
  role            text NOT NULL CHECK (role IN ('owner', 'analyst')),
  previous_role   text NULL CHECK (previous_role IN ('owner', 'analyst'))
);
CREATE INDEX membership_audit_organization_idx ON membership_audit (organization_id, id);
