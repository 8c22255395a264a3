// The flagged rings GET /api/metrics/rings lists: with an organization's API key, the groups found
// in that organization's own weekly windows (analysed once a window ended a label delay ago and
// stored by live/ring-windows.ts, read through its `OrganizationData`, bound to the key's
// organization); without credentials, those found over the public sandbox (the example history).

import type { OrganizationCaller } from '../access/organization-caller.ts';
import type { Sandbox } from '../sandbox.ts';
import type { Ring } from '../../domain/rings.ts';
import type { Db } from '../../storage/db.ts';
import { storedRings } from '../../live/ring-windows.ts';

/** What listing rings needs of the service. */
export interface RingSources {
  db: Db;
  sandbox: Pick<Sandbox, 'ringIndex'>;
}

/** The organization's rings of its latest analysed windows (oldest window first), or without a
 *  caller the public sandbox's. */
export async function ringsToList(sources: RingSources, caller: OrganizationCaller | undefined): Promise<readonly Ring[]> {
  return caller ? storedRings(sources.db, caller.organizationId) : sources.sandbox.ringIndex.rings;
}
