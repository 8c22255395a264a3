// SQL for custom models (migrations/005_custom_models.sql, 017_challengers.sql,
// 019_custom_model_boosters.sql). Settings are stored complete and never change, and so are a
// model's own boosters, if it has any (inserted with it); activation flips `active` with at most one active model per
// organization (a unique partial index backs the transaction below); at most three are challengers,
// never the active one. Every promotion, rollback and change of challengers is audited
// (model_audit), in the transaction that makes it, with who and when.

import type { CustomModel, CustomSettings } from '../model/custom.ts';
import type { Db, Queryable } from './db.ts';

const COLUMNS = 'id, organization_id, name, base_model_id, settings, active, created_at, activated_at, challenger';
/** Challengers an organization may have at once. */
export const MAX_CHALLENGERS = 3;

export async function insertCustomModel(
  db: Db,
  m: {
    id: string;
    organizationId: string;
    name: string;
    baseModelId: string;
    settings: CustomSettings;
    boosters?: Readonly<Record<string, string>> | undefined;
  },
): Promise<CustomModel> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<CustomModel>(
      `INSERT INTO custom_models (id, organization_id, name, base_model_id, settings) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [m.id, m.organizationId, m.name, m.baseModelId, m.settings],
    );
    if (m.boosters) {
      const channels = Object.keys(m.boosters);
      await tx.query(`INSERT INTO custom_model_boosters (model_id, channel, model_text) SELECT $1, c, t FROM unnest($2::text[], $3::text[]) AS b(c, t)`, [
        m.id,
        channels,
        channels.map((c) => m.boosters![c]!),
      ]);
    }
    return row!;
  });
}

/** A custom model's own boosters (LightGBM model text by channel); empty when it uses its base's. */
export async function customModelBoosters(db: Queryable, id: string): Promise<Map<string, string>> {
  const rows = await db.query<{ channel: string; model_text: string }>(`SELECT channel, model_text FROM custom_model_boosters WHERE model_id = $1`, [id]);
  return new Map(rows.map((r) => [r.channel, r.model_text]));
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

/** The ids of the organization's challengers now, in id order. */
export async function challengerIdsOf(db: Queryable, organizationId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>('SELECT id FROM custom_models WHERE organization_id = $1 AND challenger ORDER BY id', [organizationId]);
  return rows.map((r) => r.id);
}

/** Custom models of the organizations a user belongs to, oldest first. */
export async function customModelsOfUser(db: Queryable, userId: string): Promise<CustomModel[]> {
  return db.query<CustomModel>(
    `SELECT ${COLUMNS.split(', ')
      .map((c) => `cm.${c}`)
      .join(', ')} FROM custom_models cm JOIN memberships m ON m.organization_id = cm.organization_id
     WHERE m.user_id = $1 ORDER BY cm.created_at, cm.id`,
    [userId],
  );
}

/** Takes the organization's models' lock: changes of its active model and challengers queue. */
async function lockModels(tx: Queryable, organizationId: string): Promise<void> {
  await tx.query('SELECT id FROM custom_models WHERE organization_id = $1 FOR UPDATE', [organizationId]);
}

async function audit(
  tx: Queryable,
  organizationId: string,
  by: string,
  action: ModelAuditAction,
  modelId: string | null,
  previousId: string | null,
): Promise<void> {
  await tx.query('INSERT INTO model_audit (organization_id, by, action, model_id, previous_model_id) VALUES ($1, $2, $3, $4, $5)', [
    organizationId,
    by,
    action,
    modelId,
    previousId,
  ]);
}

/**
 * Makes `id` its organization's active model (the one active before stops, and `id` stops being a
 * challenger): audited as `promoted`; or stops it, so the built-in model scores again: audited as
 * `deactivated`.
 */
export async function setCustomModelActive(db: Db, id: string, active: boolean, at: Date, by: string): Promise<CustomModel> {
  return db.transaction(async (tx) => {
    const [m] = await tx.query<CustomModel>(`SELECT ${COLUMNS} FROM custom_models WHERE id = $1`, [id]);
    await lockModels(tx, m!.organization_id);
    const [before] = await tx.query<{ id: string }>('SELECT id FROM custom_models WHERE organization_id = $1 AND active', [m!.organization_id]);
    if (active) await tx.query('UPDATE custom_models SET active = false WHERE organization_id = $1 AND active AND id <> $2', [m!.organization_id, id]);
    const [row] = await tx.query<CustomModel>(
      `UPDATE custom_models SET active = $2, challenger = challenger AND NOT $2, activated_at = CASE WHEN $2 THEN $3::timestamptz ELSE activated_at END WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, active, at],
    );
    if (active && before?.id !== id) await audit(tx, m!.organization_id, by, 'promoted', id, before?.id ?? null);
    if (!active && before?.id === id) await audit(tx, m!.organization_id, by, 'deactivated', null, id);
    return row!;
  });
}

/** Makes a model a challenger or stops it being one: `full` with three already, `active` for the active model. */
export async function setChallenger(db: Db, id: string, on: boolean, by: string): Promise<CustomModel | 'full' | 'active'> {
  return db.transaction(async (tx) => {
    const [m] = await tx.query<CustomModel>(`SELECT ${COLUMNS} FROM custom_models WHERE id = $1`, [id]);
    await lockModels(tx, m!.organization_id);
    const [now] = await tx.query<CustomModel>(`SELECT ${COLUMNS} FROM custom_models WHERE id = $1`, [id]);
    if (now!.challenger === on) return now!;
    if (on && now!.active) return 'active';
    if (on) {
      const [{ n }] = (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM custom_models WHERE organization_id = $1 AND challenger', [
        m!.organization_id,
      ])) as [{ n: number }];
      if (n >= MAX_CHALLENGERS) return 'full';
    }
    const [row] = await tx.query<CustomModel>(`UPDATE custom_models SET challenger = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, on]);
    await audit(tx, m!.organization_id, by, on ? 'challenger_added' : 'challenger_removed', id, null);
    return row!;
  });
}

/**
 * Undoes the organization's newest promotion not undone yet (each rollback undoes one, newest
 * first): the model active before it (or the built-in model) scores again, audited as
 * `rolled_back`. Undefined when no promotion is left to undo.
 */
export async function rollBackPromotion(
  db: Db,
  organizationId: string,
  by: string,
  at: Date,
): Promise<{ model_id: string | null; previous_model_id: string | null } | undefined> {
  return db.transaction(async (tx) => {
    await lockModels(tx, organizationId);
    const history = await tx.query<{ action: ModelAuditAction; previous_model_id: string | null }>(
      `SELECT action, previous_model_id FROM model_audit WHERE organization_id = $1 AND action IN ('promoted', 'rolled_back') ORDER BY id DESC`,
      [organizationId],
    );
    // Newest first: each rollback cancels the newest promotion older than it not cancelled yet.
    let undone = 0;
    const target = history.find((e) => {
      if (e.action === 'rolled_back') {
        undone++;
        return false;
      }
      if (undone > 0) {
        undone--;
        return false;
      }
      return true;
    });
    if (!target) return undefined;
    const [current] = await tx.query<{ id: string }>('SELECT id FROM custom_models WHERE organization_id = $1 AND active', [organizationId]);
    await tx.query('UPDATE custom_models SET active = false WHERE organization_id = $1 AND active', [organizationId]);
    if (target.previous_model_id)
      await tx.query('UPDATE custom_models SET active = true, challenger = false, activated_at = $2 WHERE id = $1', [target.previous_model_id, at]);
    await audit(tx, organizationId, by, 'rolled_back', target.previous_model_id, current?.id ?? null);
    return { model_id: target.previous_model_id, previous_model_id: current?.id ?? null };
  });
}

export type ModelAuditAction = 'promoted' | 'rolled_back' | 'deactivated' | 'challenger_added' | 'challenger_removed';

export interface ModelAuditRow {
  id: number;
  at: Date;
  by: string;
  action: ModelAuditAction;
  model_id: string | null;
  previous_model_id: string | null;
}

/** The organization's model changes, newest first. */
export async function modelAudit(db: Queryable, organizationId: string, limit = 100): Promise<ModelAuditRow[]> {
  return db.query<ModelAuditRow>(
    'SELECT id, at, by, action, model_id, previous_model_id FROM model_audit WHERE organization_id = $1 ORDER BY id DESC LIMIT $2',
    [organizationId, limit],
  );
}

/** Whether an organization exists (the command line checks before creating a model for it). */
export async function organizationExists(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM organizations WHERE id = $1', [id]);
  return rows.length > 0;
}
