// Custom models of the caller's organizations as use cases (made from the command line,
// `npm run model:create` or an organization's training, docs/operating.md): storing one, listing
// them, reading one, and choosing the one an organization's API keys score with. Listing and reading a custom model is for members of its
// organization (`not_found` for anyone else, never `forbidden`); activating and deactivating it,
// challengers and rollbacks are for owners (`forbidden` for analysts: access/roles.ts, `manageModels`). The built-in model is never activated: it scores whenever
// no custom model is active. The routes (http/routes/models.ts) only translate HTTP to these.

import type { CustomModel } from '../model/custom.ts';
import type { Db, Queryable } from '../storage/db.ts';
import { organizationForMember } from '../storage/accounts-store.ts';
import {
  customModelsOfUser,
  getCustomModel,
  insertCustomModel,
  MAX_CHALLENGERS,
  modelAudit,
  rollBackPromotion,
  organizationExists,
  setChallenger,
  setCustomModelActive,
} from '../storage/models-store.ts';
import type { ModelAudit, RollBack } from '../contract/models.ts';
import { memberOrganization } from './access/ownership.ts';
import { requireCapability } from './access/roles.ts';
import type { Role } from '../contract/organizations.ts';
import { AppError } from './errors.ts';

/** Throws `not_found` unless the organization exists (the commands that make models name it by id). */
export async function requireOrganization(db: Queryable, id: string): Promise<void> {
  if (!(await organizationExists(db, id))) throw new AppError('not_found', `No organization ${id}.`, 'List yours with GET /api/organizations.');
}

/** Stores a custom model made outside the API (`npm run model:create`, an organization's training)
 *  for an organization that exists; a model with the same id is found rather than stored twice. */
export async function storeCustomModel(db: Db, m: Parameters<typeof insertCustomModel>[1]): Promise<CustomModel> {
  await requireOrganization(db, m.organizationId);
  return (await getCustomModel(db, m.id)) ?? insertCustomModel(db, m);
}

/** The custom models of the organizations a signed-in user belongs to; none for a guest. */
export async function customModelsVisibleTo(db: Queryable, userId: string | undefined): Promise<CustomModel[]> {
  return userId ? customModelsOfUser(db, userId) : [];
}

/** A custom model of an organization the caller belongs to; `not_found` for a guest or anyone else. */
export async function readCustomModel(db: Queryable, id: string, userId: string | undefined): Promise<CustomModel> {
  if (!userId) throw new AppError('not_found', `No model ${id}.`, 'List the models at GET /api/models.');
  return (await memberModel(db, id, userId)).model;
}

/** What choosing an organization's active model needs: the database, and the accounts (if sign-in
 *  is configured), whose trusted keys carry their organization's active model. */
export interface ModelChoice {
  db: Db;
  accounts: { forgetKeys(): void } | undefined;
}

/** Makes a custom model its organization's active model (any other stops), or stops it, for an
 *  owner of the organization. `builtInId` is the built-in model's id, which cannot be chosen. */
export async function setCustomModelActiveFor(
  deps: ModelChoice,
  id: string,
  userId: string,
  builtInId: string,
  active: boolean,
  at = new Date(),
): Promise<CustomModel> {
  if (id === builtInId)
    throw new AppError(
      'bad_request',
      'The built-in model is not activated: it scores whenever no custom model is active.',
      'Activate or deactivate a custom model of your organization (GET /api/models).',
    );
  const { model, role } = await memberModel(deps.db, id, userId);
  requireCapability(role, 'manageModels');
  const changed = await setCustomModelActive(deps.db, model.id, active, at, userId);
  // Keys carry their organization's active model: look them up afresh.
  deps.accounts?.forgetKeys();
  return changed;
}

/** Makes a custom model one of its organization's challengers (scored in shadow on every API-key
 *  request, recorded, never answered), or stops it being one; for owners. */
export async function setChallengerFor(deps: ModelChoice, id: string, userId: string, on: boolean): Promise<CustomModel> {
  const { model, role } = await memberModel(deps.db, id, userId);
  requireCapability(role, 'manageModels');
  const changed = await setChallenger(deps.db, model.id, on, userId);
  if (changed === 'full')
    throw new AppError(
      'limit_reached',
      `The organization has ${MAX_CHALLENGERS} challengers, the most it may have.`,
      'Stop one of them being a challenger (DELETE /api/models/{id}/challenger), then try again.',
    );
  if (changed === 'active')
    throw new AppError(
      'conflict',
      `${model.id} is the organization's active model; a challenger is compared with it.`,
      'Choose another model as the challenger, or roll back first.',
    );
  deps.accounts?.forgetKeys();
  return changed;
}

/** Undoes the organization's last promotion (the model active before it scores again); for owners. */
export async function rollBackFor(deps: ModelChoice, organizationId: string, userId: string, at = new Date()): Promise<RollBack> {
  const org = await memberOrganization(deps.db, organizationId, userId);
  requireCapability(org.role, 'manageModels', org.name);
  const done = await rollBackPromotion(deps.db, org.id, userId, at);
  if (!done)
    throw new AppError(
      'conflict',
      'There is no promotion to roll back: none was made, or the last one was rolled back already.',
      "See the organization's model history (GET /api/organizations/{id}/models/audit).",
    );
  deps.accounts?.forgetKeys();
  return done;
}

/** The organization's promotions, rollbacks and challenger changes, newest first, for members. */
export async function modelAuditFor(db: Queryable, organizationId: string, userId: string): Promise<ModelAudit> {
  const org = await memberOrganization(db, organizationId, userId);
  return {
    data: (await modelAudit(db, org.id)).map((r) => ({
      at: r.at.toISOString(),
      by: r.by,
      action: r.action,
      model_id: r.model_id,
      previous_model_id: r.previous_model_id,
    })),
  };
}

/** A custom model of an organization the user belongs to (`not_found` otherwise), with their role. */
async function memberModel(db: Queryable, id: string, userId: string): Promise<{ model: CustomModel; role: Role }> {
  const m = await getCustomModel(db, id);
  const org = m ? await organizationForMember(db, m.organization_id, userId) : undefined;
  if (!m || !org) throw new AppError('not_found', `No model ${id} that you can see.`, 'List the models at GET /api/models.');
  return { model: m, role: org.role };
}
