// An organization's challenger made from its own recorded traffic (`npm run train -- --organization`,
// docs/model.md "Challengers"): the use case reads the transactions that count at `asOf`, scored or
// imported (their stored features and the labels known by then), hands them to the training library
// (training/organization.ts) and stores what it makes as the organization's custom model. The same
// data and `asOf` make the same model, found rather than stored twice.

import { boosterTexts } from '../model/bundle.ts';
import type { ModelBundle } from '../model/bundle-types.ts';
import type { CustomSettings } from '../model/custom.ts';
import type { Db } from '../storage/db.ts';
import { organizationData } from '../storage/organization-data.ts';
import { sha256 } from '../training/digest.ts';
import type { MovedFeature } from '../training/feature-drift.ts';
import { recalibrate, trainOwn, type Counted, type Counts, type Made } from '../training/organization.ts';
import { requireOrganization, storeCustomModel } from './custom-models.ts';

/** The organization's transactions that count at `asOf`, scored or imported (with the features
 *  each had at its own time), oldest first. */
async function countedRows(db: Db, organizationId: string, bundle: ModelBundle, asOf: number): Promise<Counted[]> {
  const data = organizationData(db, organizationId);
  const until = asOf - bundle.file.training.label_delay_ms;
  const total = bundle.channels.reduce((w, c) => w + c.features.length, 0);
  const kept: Counted[] = [];
  let after: [number, number] | undefined;
  for (;;) {
    const page = await data.importedFeatures.featured({ to: until, after });
    if (page.length === 0) break;
    for (const r of page) {
      const known = r.label === 1 && r.label_known_ms !== null && r.label_known_ms <= asOf;
      kept.push({ time: r.time_ms, label: known ? 1 : 0, features: new Float32Array(Uint8Array.from(r.features).buffer, 0, total) });
    }
    const last = page[page.length - 1]!;
    after = [last.time_ms, last.seq];
  }
  return kept;
}

/** What the command prints: the stored model, how it was made, and its test figures. */
export interface OrganizationModel {
  id: string;
  organization_id: string;
  name: string;
  kind: 'recalibrated' | 'own_boosters';
  as_of: string;
  /** Own boosters: the features the added trees do not split on, with their stability index from
   *  the training part to validation. */
  features_left_out?: MovedFeature[];
  counts: Counts;
  test: Made['test'];
  settings: CustomSettings;
}

/** Makes and stores the organization's model from its traffic in `db` as of `asOf` (or finds the
 *  same one stored), over `base` as loaded from `modelDir`; throws TooFewFrauds or NothingLearned,
 *  and `not_found` for an organization that does not exist. */
export async function trainOrganizationModel(
  db: Db,
  base: ModelBundle,
  o: { modelDir: string; organization: string; asOf: number; name?: string | undefined; recalibrate: boolean },
): Promise<OrganizationModel> {
  await requireOrganization(db, o.organization);
  const rows = await countedRows(db, o.organization, base, o.asOf);
  const made = o.recalibrate ? recalibrate(base, rows) : await trainOwn(base, boosterTexts(o.modelDir, base), rows);
  const id = `cm_${sha256(JSON.stringify({ organization: o.organization, base: base.file.id, settings: made.settings })).slice(0, 16)}`;
  const at = new Date(o.asOf).toISOString();
  const model = await storeCustomModel(db, {
    id,
    organizationId: o.organization,
    name: o.name ?? `${o.recalibrate ? 'recalibrated' : 'trained'} as of ${at}`,
    baseModelId: base.file.id,
    settings: made.settings,
    boosters: made.boosters,
  });
  return {
    id: model.id,
    organization_id: model.organization_id,
    name: model.name,
    kind: o.recalibrate ? 'recalibrated' : 'own_boosters',
    as_of: at,
    ...(made.featuresLeftOut ? { features_left_out: made.featuresLeftOut } : {}),
    counts: made.counts,
    test: made.test,
    settings: model.settings,
  };
}
