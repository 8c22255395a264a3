// An organization's own fields, as use cases: its members read the declarations and each field's
// audit; its owners declare a field (or a retired one again) and retire one (`forbidden` for an
// analyst: access/roles.ts, `manageFields`). Limits: MAX_FIELDS declared at once, MAX_KEY_FIELDS of them keys (`limit_reached`); a
// name declared already is `conflict`. Every read and write goes through the organization's
// fields (`organizationData(db, id).fields`), bound to the organization the caller acts for, so
// another organization's field is simply not found. A write is answered once this process has
// applied it (the live feed carries it to every other process).

import type { Field, FieldAudit, FieldList } from '../../contract/custom-fields.ts';
import { MAX_FIELDS, MAX_KEY_FIELDS, type FieldDeclaration } from '../../domain/fields.ts';
import type { FieldRow } from '../../storage/fields-store.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { AppError } from '../errors.ts';
import type { PolicyDeps } from './lists.ts';
import { isoTime, isoTimeOrNull } from '../../domain/iso-time.ts';

const now = (deps: PolicyDeps) => (deps.clock ?? Date.now)();

function fieldView(f: FieldRow): Field {
  return {
    name: f.name,
    type: f.type,
    description: f.description,
    key: f.key,
    declared_at: isoTime(f.created_at_ms),
    declared_by: f.created_by,
    retired_at: isoTimeOrNull(f.retired_at_ms),
    retired_by: f.retired_by,
  };
}

const noField = (name: string) =>
  new AppError('not_found', `No field named ${name} declared in this organization.`, "Check the name (GET the organization's fields), or declare it first.");

/** The organization's fields by name: those declared now, and with `retired` the retired ones too. */
export async function allFields(deps: PolicyDeps, caller: OrganizationCaller, retired = false): Promise<FieldList> {
  const rows = await organizationData(deps.db, caller.organizationId).fields.all(retired);
  return { data: rows.map(fieldView), limits: { fields: MAX_FIELDS, keys: MAX_KEY_FIELDS } };
}

/** Declares a field (owners), or a retired one again with what is given now. */
export async function declareField(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  d: { name: string; type: FieldDeclaration['type']; description?: string | undefined; key: boolean },
): Promise<Field> {
  requireCapability(caller.role, 'manageFields');
  if (d.key && d.type !== 'string')
    throw new AppError('validation_failed', 'Only a string field can be a key.', 'Declare the field with type string, or without key.', {
      fields: [{ path: 'body.key', message: 'only a string field can be a key' }],
    });
  const made = await organizationData(deps.db, caller.organizationId).fields.declare({
    name: d.name,
    type: d.type,
    description: d.description ?? null,
    key: d.key,
    at: now(deps),
    by: caller.by,
    maxFields: MAX_FIELDS,
    maxKeys: MAX_KEY_FIELDS,
  });
  if ('taken' in made)
    throw new AppError('conflict', `A field named ${d.name} is declared already.`, 'Use another name, or retire the field first (its stored values stay).');
  if ('over' in made)
    throw new AppError(
      'limit_reached',
      made.over === 'keys'
        ? `The organization has ${made.limit} key fields, the most it may have.`
        : `The organization has ${made.limit} fields, the most it may have.`,
      made.over === 'keys' ? 'Retire a key field, or declare this one without key.' : 'Retire a field it no longer sends.',
    );
  await deps.tail.reach(made.xid);
  return fieldView(made.field);
}

/** Retires a field (owners): rules no longer read it and it is no longer declared; values stored stay. */
export async function retireField(deps: PolicyDeps, caller: OrganizationCaller, name: string): Promise<Field> {
  requireCapability(caller.role, 'manageFields');
  const retired = await organizationData(deps.db, caller.organizationId).fields.retire(name, now(deps), caller.by);
  if (!retired) throw noField(name);
  await deps.tail.reach(retired.xid);
  return fieldView(retired.field);
}

/** Every recorded change of a field, oldest first; `not_found` for a field the organization never declared. */
export async function fieldAudit(deps: PolicyDeps, caller: OrganizationCaller, name: string): Promise<FieldAudit> {
  const fields = organizationData(deps.db, caller.organizationId).fields;
  if (!(await fields.one(name))) throw noField(name);
  return { data: (await fields.audit(name)).map((e) => ({ at: isoTime(e.at_ms), by: e.by, action: e.action, detail: e.detail })) };
}
