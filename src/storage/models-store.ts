// SQL for custom models (migrations/005_custom_models.sql). Settings are stored complete and never
// change; activation flips `active` with at most one active model per organization (a unique
// partial index backs the transaction below).

import type { CustomModel, CustomSettings } from '../model/custom.ts';
import type { Db, Queryable } from './db.ts';

const COLUMNS = 'id, organization_id, name, base_model_id, settings, active, created_at, activated_at';

export async function insertCustomModel(db: Queryable, m: { id: string; organizationId: string; name: string; baseModelId: string; settings: CustomSettings }): Promise<CustomModel> {
  const [row] = await db.query<CustomModel>(
    `INSERT INTO custom_models (id, organization_id, name, base_model_id, settings) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [m.id, m.organizationId, m.name, m.baseModelId, m.settings],
  );
  return row!;
}

export async function getCustomModel(db: Queryable, id: string): Promise<CustomModel | undefined> {
  const [row] = await db.query<CustomModel>(`SELECT ${COLUMNS} FROM custom_models WHERE id = $1`, [id]);
  return row;
}

/** The id of the organization's active custom model, if it has one. */
export async function activeModelIdOf(db: Queryable, organizationId: string): Promise<string | undefined> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM custom_models WHERE organization_id = $1 AND active', [organizationId]);
  return row?.id;
}

/** Custom models of the organizations a user belongs to, oldest first. */
export async function customModelsOfUser(db: Queryable, userId: string): Promise<CustomModel[]> {
  return db.query<CustomModel>(
    `SELECT ${COLUMNS.split(', ').map((c) => `cm.${c}`).join(', ')} FROM custom_models cm JOIN memberships m ON m.organization_id = cm.organization_id
     WHERE m.user_id = $1 ORDER BY cm.created_at, cm.id`,
    [userId],
  );
}

/** Makes `id` its organization's active model (any other is deactivated), or deactivates it. */
export async function setCustomModelActive(db: Db, id: string, active: boolean, at: Date): Promise<CustomModel> {
  return db.transaction(async (tx) => {
    const [m] = await tx.query<CustomModel>(`SELECT ${COLUMNS} FROM custom_models WHERE id = $1 FOR UPDATE`, [id]);
    if (active) await tx.query('UPDATE custom_models SET active = false WHERE organization_id = $1 AND active AND id <> $2', [m!.organization_id, id]);
    const [row] = await tx.query<CustomModel>(`UPDATE custom_models SET active = $2, activated_at = CASE WHEN $2 THEN $3::timestamptz ELSE activated_at END WHERE id = $1 RETURNING ${COLUMNS}`, [id, active, at]);
    return row!;
  });
}

/** Whether an organization exists (the command line checks before creating a model for it). */
export async function organizationExists(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM organizations WHERE id = $1', [id]);
  return rows.length > 0;
}
