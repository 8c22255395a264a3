// An organization's declared fields (migrations/020_custom_fields.sql), bound to the organization by
// its scope (organization-data.ts): declaring one (or a retired one again), reading them, retiring
// one, and each field's audit. The limits (how many fields, how many keys) are checked in the
// declaring transaction under a lock on the organization's row, so two declarations at once cannot
// both take the last place. Every write renews the row's feed position, queues the live feed's
// NOTIFY and answers its transaction id, so the caller can wait until this process has applied it.

import type { Queryable } from './db.ts';
import { feedXid } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { auditOf, writeAudit, type AuditRow } from './rules-store.ts';
import type { FieldDeclaration, FieldState } from '../domain/fields.ts';

export interface FieldRow extends FieldDeclaration {
  created_at_ms: number;
  created_by: string;
  retired_at_ms: number | null;
  retired_by: string | null;
}

const COLUMNS = `name, type, description, key, created_at_ms, created_by, retired_at_ms, retired_by`;

/** Why a declaration was not made: the name is declared already, or a limit is reached. */
export type DeclineReason = { taken: FieldRow } | { over: 'fields' | 'keys'; limit: number };

/** Declares a field, or declares a retired one again with what is given now; a name declared and
 *  not retired is `taken`. */
export async function declareField(
  scope: OrganizationScope,
  f: FieldDeclaration & { at: number; by: string; maxFields: number; maxKeys: number },
): Promise<{ field: FieldRow; xid: number } | DeclineReason> {
  return scope.db.transaction(async (tx) => {
    // One declaration of the organization at a time: the counts below stay true until it commits.
    await tx.query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [scope.organizationId]);
    const [existing] = await tx.query<FieldRow>(`SELECT ${COLUMNS} FROM custom_fields WHERE organization_id = $1 AND name = $2`, [
      scope.organizationId,
      f.name,
    ]);
    if (existing && existing.retired_at_ms === null) return { taken: existing };
    const [counts] = await tx.query<{ fields: number; keys: number }>(
      `SELECT count(*)::int AS fields, (count(*) FILTER (WHERE key))::int AS keys FROM custom_fields WHERE organization_id = $1 AND retired_at_ms IS NULL`,
      [scope.organizationId],
    );
    if (counts!.fields >= f.maxFields) return { over: 'fields', limit: f.maxFields };
    if (f.key && counts!.keys >= f.maxKeys) return { over: 'keys', limit: f.maxKeys };
    const values = [scope.organizationId, f.name, f.type, f.description, f.key, f.at, f.by];
    const [field] = existing
      ? await tx.query<FieldRow>(
          `UPDATE custom_fields SET type = $3, description = $4, key = $5, created_at_ms = $6, created_by = $7, retired_at_ms = NULL, retired_by = NULL,
             seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
           WHERE organization_id = $1 AND name = $2 RETURNING ${COLUMNS}`,
          values,
        )
      : await tx.query<FieldRow>(
          `INSERT INTO custom_fields (organization_id, name, type, description, key, created_at_ms, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
          values,
        );
    await writeAudit(tx, scope, 'field', {
      at: f.at,
      by: f.by,
      id: f.name,
      action: existing ? 'declared_again' : 'declared',
      detail: { type: f.type, key: f.key, description: f.description },
    });
    return { field: field!, xid: await feedXid(tx) };
  });
}

/** The organization's fields, by name: those declared now, and with `retired` the retired ones too. */
export async function listFields(scope: OrganizationScope, retired = false): Promise<FieldRow[]> {
  return scope.db.query<FieldRow>(
    `SELECT ${COLUMNS} FROM custom_fields WHERE organization_id = $1 ${retired ? '' : 'AND retired_at_ms IS NULL'} ORDER BY name`,
    [scope.organizationId],
  );
}

/** One field, retired or not; undefined when the organization never declared it. */
export async function getField(scope: OrganizationScope, name: string): Promise<FieldRow | undefined> {
  const [row] = await scope.db.query<FieldRow>(`SELECT ${COLUMNS} FROM custom_fields WHERE organization_id = $1 AND name = $2`, [scope.organizationId, name]);
  return row;
}

/** Retires a declared field; undefined when the organization has no such field declared now. */
export async function retireField(scope: OrganizationScope, name: string, at: number, by: string): Promise<{ field: FieldRow; xid: number } | undefined> {
  return scope.db.transaction(async (tx) => {
    const [field] = await tx.query<FieldRow>(
      `UPDATE custom_fields SET retired_at_ms = $3, retired_by = $4, seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
       WHERE organization_id = $1 AND name = $2 AND retired_at_ms IS NULL RETURNING ${COLUMNS}`,
      [scope.organizationId, name, at, by],
    );
    if (!field) return undefined;
    await writeAudit(tx, scope, 'field', { at, by, id: name, action: 'retired', detail: null });
    return { field, xid: await feedXid(tx) };
  });
}

/** The fields declared now, as a process holds them (a history's load reads them with its rules). */
export async function liveFieldStates(tx: Queryable, scope: OrganizationScope): Promise<FieldState[]> {
  const rows = await tx.query<{ name: string; type: FieldState['type']; key: boolean }>(
    `SELECT name, type, key FROM custom_fields WHERE organization_id = $1 AND retired_at_ms IS NULL`,
    [scope.organizationId],
  );
  return rows.map((r) => ({ ...r, retired: false }));
}

/** Every recorded change of a field, oldest first. */
export function fieldAudit(scope: OrganizationScope, name: string): Promise<AuditRow[]> {
  return auditOf(scope, 'field', name);
}
