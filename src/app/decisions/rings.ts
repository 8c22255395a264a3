// The flagged rings GET /api/metrics/rings lists: with an organization's API key, the groups found
// in that organization's own weekly windows (analysed once a window ended a label delay ago and
// stored by live/ring-windows.ts, read through its `OrganizationData`, bound to the key's
// organization); without credentials, those found over the public sandbox (the example history).
// They are answered as the contract's `live` part of that answer (contract/evaluation.ts): what they
// are, how many, and the latest 50 with their times as ISO text.

import type { OrganizationCaller } from '../access/organization-caller.ts';
import type { Sandbox } from '../sandbox.ts';
import type { MetricsRings } from '../../contract/evaluation.ts';
import type { Ring } from '../../domain/rings.ts';
import type { Db } from '../../storage/db.ts';
import { storedRings } from '../../live/ring-windows.ts';
import { isoTime } from '../../domain/iso-time.ts';

/** What listing rings needs of the service. */
export interface RingSources {
  db: Db;
  sandbox: Pick<Sandbox, 'built'>;
}

type LiveRings = MetricsRings['live'];

/** How many groups the answer lists: the latest. */
const LISTED = 50;

/** A flagged group as answered: its members by id, its main channel. */
function ringGroup(g: Ring): LiveRings['groups'][number] {
  return {
    ring_id: g.ring_id,
    window_start: isoTime(g.window_start),
    window_end: isoTime(g.window_end),
    published_at: isoTime(g.published_at),
    members: g.members,
    customers: g.customers.length,
    customer_ids: g.customers,
    merchants: g.merchants,
    main_channel: g.channels[0] ?? null,
    fraud_rate: g.fraud_rate,
  };
}

/** The organization's rings of its latest analysed windows (oldest window first), or without a
 *  caller the public sandbox's: how many, and the latest LISTED. */
export async function ringsToList(sources: RingSources, caller: OrganizationCaller | undefined): Promise<LiveRings> {
  const rings = caller ? await storedRings(sources.db, caller.organizationId) : (await sources.sandbox.built()).ringIndex.rings;
  return {
    note: caller
      ? "Groups flagged in your organization's weekly windows (Monday 00:00 UTC to Monday), each analysed once the window ended a label delay ago; the latest 52 windows."
      : "Groups flagged over the public sandbox (the example history; completed weekly windows, published one label delay after they close). An organization's own rings are listed only with its API key.",
    ...(caller ? { organization_id: caller.organizationId } : {}),
    flagged_groups: rings.length,
    groups: rings.slice(-LISTED).map(ringGroup),
  };
}
