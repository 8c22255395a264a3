// The organization's own fields a dataset's mapping maps, checked when a job over the dataset is
// queued: a history import stores them, and scoring checks their cells as an import would, so
// each field must be one the job's organization declares now (another organization's
// declarations count for nothing), and a scoring job of no organization cannot read any. Refused
// `validation_failed` naming each mapping entry (`mapping.fields.<name>`) and saying what to do.
// The jobs check again when they run (the declarations or the mapping may change meanwhile).

import { fieldEntries } from '../../datasets/column-names.ts';
import { undeclaredFields } from '../../datasets/mapped-fields.ts';
import type { Db } from '../../storage/db.ts';
import type { DatasetRecord } from '../../storage/datasets.ts';
import { organizationData } from '../../storage/organization-data.ts';
import { AppError } from '../errors.ts';

/** `validation_failed` unless `org` declares every field `d`'s mapping maps; `then` is what to queue
 *  again ("the import"). */
export async function requireDeclaredFields(db: Db, org: { id: string; name: string }, d: DatasetRecord, then: string): Promise<void> {
  if (fieldEntries(d.mapping).length === 0) return;
  const declared = await organizationData(db, org.id).fields.all();
  const missing = undeclaredFields(
    d.mapping,
    declared.map((f) => ({ name: f.name, retired: false })),
  );
  if (missing.length === 0) return;
  const names = missing.map(([name]) => `fields.${name}`).join(', ');
  throw new AppError(
    'validation_failed',
    `Dataset ${d.id} maps ${missing.map(([name, header]) => `column "${header}" onto fields.${name}`).join(', ')}, which ${org.name} has not declared.`,
    `Declare ${missing.length > 1 ? 'each' : 'it'} first (POST /api/organizations/${org.id}/fields with its name and type), or remove ${names} from the mapping (POST /api/datasets/${d.id}/validate), then queue ${then} again.`,
    {
      fields: missing.map(([name]) => ({
        path: `mapping.fields.${name}`,
        message: `fields.${name} is not declared by ${org.name}: declare it first`,
      })),
    },
  );
}

/** `validation_failed` for a scoring job of no organization whose dataset maps fields: they are an
 *  organization's own. */
export function refuseFieldsWithoutOrganization(d: DatasetRecord): void {
  const mapped = fieldEntries(d.mapping);
  if (mapped.length === 0) return;
  throw new AppError(
    'validation_failed',
    `Dataset ${d.id} maps columns onto ${mapped.map(([name]) => `fields.${name}`).join(', ')}: fields an organization declares, and this job belongs to no organization.`,
    `Queue the scoring with the organization_id of the organization that declared them, or remove them from the mapping (POST /api/datasets/${d.id}/validate).`,
    { fields: mapped.map(([name]) => ({ path: `mapping.fields.${name}`, message: `fields.${name}: a job of no organization reads no fields` })) },
  );
}
