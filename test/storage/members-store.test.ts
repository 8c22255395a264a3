// Members and invitations in the organization-scoped data layer, on both back ends: migration 022
// turns the stored role `member` into `analyst` (memberships and invitations alike); two
// organizations with a member of the same user and an invitation of the same e-mail, and every
// method of one organization's members part reads and changes its own only, whatever user id or
// e-mail it is handed; the last owner stays, two demotions at once leave one owner; every change
// is in the audit, and an invitation claimed at sign-in (accounts-store) joins with its role and
// is audited as `joined`.

import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../src/storage/db.ts';
import { claimInvitations } from '../../src/storage/accounts-store.ts';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../../src/storage/migrate.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { eachBackend } from '../support/backends.ts';

eachBackend('migration 022 renames the role member to analyst, in memberships and invitations', async (t, fx) => {
  const before = await mkdtemp(join(tmpdir(), 'migrations-before-teams-'));
  t.teardown(() => rm(before, { recursive: true, force: true }));
  for (const m of await readMigrations()) if (m.version < '022') await copyFile(join(MIGRATIONS_DIR, m.file), join(before, m.file));
  const backend = await fx.openBackend();
  await migrate(backend, before);
  await backend.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com'), ('u2', 'u2@example.com')`);
  await backend.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
  await backend.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ('org_a', 'u1', 'owner'), ('org_a', 'u2', 'member')`);
  await backend.query(`INSERT INTO organization_invitations (organization_id, email, role) VALUES ('org_a', 'x@example.com', 'member')`);
  t.strictSame((await migrate(backend))[0], '022_teams', 'the migration runs on a database that had members');
  t.strictSame(await backend.query(`SELECT user_id, role FROM memberships ORDER BY user_id`), [
    { user_id: 'u1', role: 'owner' },
    { user_id: 'u2', role: 'analyst' },
  ]);
  t.strictSame(await backend.query(`SELECT email, role, invited_by FROM organization_invitations`), [
    { email: 'x@example.com', role: 'analyst', invited_by: null },
  ]);
  await t.rejects(backend.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ('org_a', 'u2', 'member')`), 'the old name is refused now');
});

async function twoOrganizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email, name) VALUES ('u1', 'U1@Example.com', 'One'), ('u2', 'u2@example.com', 'Two'), ('u3', null, null)`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
  await db.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ('org_a', 'u1', 'owner'), ('org_a', 'u2', 'analyst'), ('org_b', 'u1', 'owner'), ('org_b', 'u3', 'analyst')`,
  );
}

eachBackend("one organization's members and invitations are its own, in every method", async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a').members;
  const b = organizationData(db, 'org_b').members;
  const max = 100;

  t.same(
    (await a.all()).map((m) => [m.user_id, m.email, m.role]),
    [
      ['u1', 'U1@Example.com', 'owner'],
      ['u2', 'u2@example.com', 'analyst'],
    ],
  );
  t.equal(await b.one('u2'), undefined, "B cannot read A's member");

  t.match(await a.invite({ email: 'New@Example.com', role: 'analyst', by: 'u1', max }), {
    invitation: { email: 'new@example.com', role: 'analyst', invited_by: 'u1' },
  });
  t.match(
    await a.invite({ email: 'NEW@example.com', role: 'owner', by: 'u1', max }),
    { invited: { email: 'new@example.com' } },
    'invited already, whatever the case',
  );
  t.same(await a.invite({ email: 'u2@EXAMPLE.com', role: 'owner', by: 'u1', max }), { member: 'u2' }, "a member's e-mail, compared without case");
  t.match(await b.invite({ email: 'new@example.com', role: 'owner', by: 'u1', max }), { invitation: { role: 'owner' } }, 'the same e-mail in B is B’s own');
  t.match(await b.invite({ email: 'u2@example.com', role: 'analyst', by: 'u1', max }), { invitation: {} }, "A's member is no member of B");
  t.same(await b.invite({ email: 'third@example.com', role: 'analyst', by: 'u1', max: 2 }), { full: 2 }, 'at most max waiting');

  t.equal(await b.changeRole('u2', 'owner', 'u1'), undefined, "B cannot change A's member");
  t.equal(await b.remove('u2', 'u1'), undefined, "B cannot remove A's member");
  t.same(
    (await a.invitations()).map((i) => [i.email, i.role]),
    [['new@example.com', 'analyst']],
  );
  t.match(await b.withdraw('new@example.com', 'u1'), { role: 'owner' }, "B withdraws its own invitation, not A's");
  t.equal(await b.withdraw('new@example.com', 'u1'), undefined, 'once');
  t.same(
    (await a.invitations()).map((i) => i.email),
    ['new@example.com'],
    "A's is still there",
  );

  // The last owner stays; two demotions at once leave one owner.
  t.equal(await a.changeRole('u1', 'analyst', 'u1'), 'last_owner');
  t.equal(await a.remove('u1', 'u1'), 'last_owner');
  t.match(await a.changeRole('u2', 'owner', 'u1'), { user_id: 'u2', role: 'owner' });
  t.match(await a.changeRole('u2', 'owner', 'u1'), { role: 'owner' }, 'the same role: nothing changes');
  const both = await Promise.all([a.changeRole('u1', 'analyst', 'u2'), a.changeRole('u2', 'analyst', 'u1')]);
  t.equal(both.filter((r) => r === 'last_owner').length, 1, 'one of two demotions at once is refused');
  t.equal((await a.all()).filter((m) => m.role === 'owner').length, 1, 'one owner is left');
  const owner = (await a.all()).find((m) => m.role === 'owner')!.user_id;
  const other = owner === 'u1' ? 'u2' : 'u1';
  t.match(await a.remove(other, owner), { user_id: other });
  t.same(
    (await b.all()).map((m) => m.user_id),
    ['u1', 'u3'],
    "B's members are untouched",
  );

  // An invitation claimed at sign-in joins with its role, in every organization that invited it.
  await db.query(`INSERT INTO users (id, email) VALUES ('u9', 'new@example.com')`);
  await b.invite({ email: 'new@example.com', role: 'owner', by: 'u1', max });
  await claimInvitations(db, 'u9', 'New@Example.COM');
  t.match(await a.one('u9'), { role: 'analyst' });
  t.match(await b.one('u9'), { role: 'owner' });
  t.same(await a.invitations(), []);

  // Every change audited, newest first, each organization's own.
  const auditA = (await a.auditPage(100))!.entries;
  const emailOf = (id: string) => (id === 'u1' ? 'U1@Example.com' : 'u2@example.com');
  t.same(
    auditA.map((e) => [e.action, e.by, e.user_id, e.email, e.role, e.previous_role]),
    [
      ['joined', 'u9', 'u9', 'new@example.com', 'analyst', null],
      ['removed', owner, other, emailOf(other), 'analyst', null],
      ['role_changed', owner, other, emailOf(other), 'analyst', 'owner'],
      ['role_changed', 'u1', 'u2', 'u2@example.com', 'owner', 'analyst'],
      ['invited', 'u1', null, 'new@example.com', 'analyst', null],
    ],
  );
  t.equal(auditA[4]!.by_email, 'U1@Example.com', 'with the e-mail of who made it');
  t.same(
    (await b.auditPage(100))!.entries.map((e) => e.action),
    ['joined', 'invited', 'invitation_withdrawn', 'invited', 'invited'],
  );
  const first = (await a.auditPage(2))!;
  t.equal(first.entries.length, 2);
  t.ok(first.hasMore);
  const next = (await a.auditPage(2, first.entries[1]!.id))!;
  t.same(
    next.entries.map((e) => e.id),
    auditA.slice(2, 4).map((e) => e.id),
    'the next page',
  );
  t.equal(await b.auditPage(2, first.entries[1]!.id), undefined, "B cannot page from A's change");
});
