// Custom models of the caller's organizations as use cases (made from the command line,
// `npm run model:create`, docs/operating.md): listing them, reading one, and choosing the one an
// organization's API keys score with. Listing and reading a custom model is for members of its
// organization (`not_found` for anyone else, never `forbidden`); activating and deactivating it is
// for owners (`forbidden` for members). The built-in model is never activated: it scores whenever
// no custom model is active. The routes (http/routes/models.ts) only translate HTTP to these.

import type { CustomModel } from '../model/custom.ts';
import type { Db, Queryable } from '../storage/db.ts';
import { organizationForMember } from '../storage/accounts-store.ts';
import { customModelsOfUser, getCustomModel, setCustomModelActive } from '../storage/models-store.ts';
import { AppError } from './errors.ts';

/** The custom models of the organizations a signed-in user belongs to; none for a guest. */
export async function customModelsVisibleTo(db: Queryable, userId: string | undefined): Promise<CustomModel[]> {
  return userId ? customModelsOfUser(db, userId) : [];
}

/** A custom model of an organization the caller belongs to; `not_found` for a guest or anyone else. */
export async function readCustomModel(db: Queryable, id: string, userId: string | undefined): Promise<CustomModel> {
  if (!userId) throw new AppError('not_found', 'not_found', `No model ${id}.`, 'List the models at GET /api/models.');
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
export async function setCustomModelActiveFor(deps: ModelChoice, id: string, userId: string, builtInId: string, active: boolean, at = new Date()): Promise<CustomModel> {
  if (id === builtInId) throw new AppError('not_applicable', 'bad_request', 'The built-in model is not activated: it scores whenever no custom model is active.', 'Activate or deactivate a custom model of your organization (GET /api/models).');
  const { model, role } = await memberModel(deps.db, id, userId);
  if (role !== 'owner') throw new AppError('forbidden', 'forbidden', 'Only owners of the organization choose its active model.', 'Ask an owner of the organization to do it.');
  const changed = await setCustomModelActive(deps.db, model.id, active, at);
  // Keys carry their organization's active model: look them up afresh.
  deps.accounts?.forgetKeys();
  return changed;
}

/** A custom model of an organization the user belongs to (`not_found` otherwise), with their role. */
async function memberModel(db: Queryable, id: string, userId: string): Promise<{ model: CustomModel; role: 'owner' | 'member' }> {
  const m = await getCustomModel(db, id);
  const org = m ? await organizationForMember(db, m.organization_id, userId) : undefined;
  if (!m || !org) throw new AppError('not_found', 'not_found', `No model ${id} that you can see.`, 'List the models at GET /api/models.');
  return { model: m, role: org.role };
}
