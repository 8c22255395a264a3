// An organization's challenger made from its own recorded traffic (`npm run train -- --organization`,
// docs/model.md "Challengers"): the use case reads the transactions that count at `asOf`, scored or
// imported (their stored features and the labels known by then), hands them to the training library
// (training/organization.ts) and stores what it makes as the organization's custom model. The same
// data and `asOf` make the same model, found rather than stored twice.

// node:crypto, not training/digest.ts's sha256: that module loads TypeScript (a development
// dependency) for its code fingerprints, and the server must start from a production install.
import { createHash } from 'node:crypto';
import { boosterTexts } from '../model/bundle.ts';
import type { ModelBundle } from '../model/bundle-types.ts';
import type { CustomSettings } from '../model/custom.ts';
import type { Db } from '../storage/db.ts';
import { organizationData } from '../storage/organization-data.ts';
import type { MovedFeature } from '../training/feature-drift.ts';
import type { FeaturedRow } from '../storage/imported-features.ts';
import {
  plannedCounts,
  recalibrate,
  TooFewFrauds,
  trainOwn,
  type Counted,
  type Counts,
  type Made,
  type OrganizationModelKind,
} from '../training/organization.ts';
import { AppError } from './errors.ts';
import type { OrganizationTrainingPlan } from '../contract/training.ts';
import { requireOrganization, storeCustomModel } from './custom-models.ts';

/** Each of the organization's transactions that count at `asOf` (older than the label delay, with
 *  features: scored, or imported and replayed), oldest first, with the label known by then; read
 *  with their features or, for a plan that only counts, without. */
async function eachCounted(
  db: Db,
  organizationId: string,
  bundle: ModelBundle,
  asOf: number,
  features: boolean,
  each: (row: FeaturedRow, label: 0 | 1) => void,
): Promise<void> {
  const data = organizationData(db, organizationId);
  const to = asOf - bundle.file.training.label_delay_ms;
  let after: [number, number] | undefined;
  for (;;) {
    const page = await data.importedFeatures.featured({ to, after, features });
    if (page.length === 0) break;
    for (const r of page) each(r, r.label === 1 && r.label_known_ms !== null && r.label_known_ms <= asOf ? 1 : 0);
    const last = page[page.length - 1]!;
    after = [last.time_ms, last.seq];
  }
}

/** The organization's transactions that count at `asOf`, with their features, as training takes them. */
async function countedRows(db: Db, organizationId: string, bundle: ModelBundle, asOf: number): Promise<Counted[]> {
  const total = bundle.channels.reduce((w, c) => w + c.features.length, 0);
  const kept: Counted[] = [];
  await eachCounted(db, organizationId, bundle, asOf, true, (r, label) => {
    kept.push({ time: r.time_ms, label, features: new Float32Array(Uint8Array.from(r.features).buffer, 0, total) });
  });
  return kept;
}

/** Checks that the organization's data at `asOf` is enough for a model of its own (the split and
 *  the frauds `npm run train -- --organization` needs), without training: the plan, or
 *  `not_enough_data` saying what is missing. */
export async function planOrganizationModel(
  db: Db,
  base: ModelBundle,
  o: { organization: string; asOf: number; recalibrate: boolean },
): Promise<Omit<OrganizationTrainingPlan, 'name'>> {
  const rows: { time: number; label: 0 | 1 }[] = [];
  let imported = 0;
  await eachCounted(db, o.organization, base, o.asOf, false, (r, label) => {
    rows.push({ time: r.time_ms, label });
    if (r.imported) imported++;
  });
  const kind: OrganizationModelKind = o.recalibrate ? 'recalibrated' : 'own_boosters';
  const command = `npm run train -- --organization ${o.organization}${o.recalibrate ? ' --recalibrate' : ''}`;
  let counts: Counts;
  try {
    counts = plannedCounts(base, rows, kind);
  } catch (e) {
    if (!(e instanceof TooFewFrauds)) throw e;
    throw new AppError(
      'not_enough_data',
      `${command} would refuse: ${e.message}`,
      'Import labelled history (POST /api/organizations/{id}/history-imports with outcomes), report outcomes of scored payments (POST /api/v1/outcomes), or wait for more traffic.',
    );
  }
  const at = (i: number) => (rows[i] ? new Date(rows[i].time).toISOString() : null);
  return {
    source: 'organization',
    organization_id: o.organization,
    kind,
    as_of: new Date(o.asOf).toISOString(),
    transactions: { scored: rows.length - imported, imported, first: at(0), last: at(rows.length - 1) },
    counts,
    command,
  };
}

/** What the command prints: the stored model, how it was made, and its test figures. */
export interface OrganizationModel {
  id: string;
  organization_id: string;
  name: string;
  kind: OrganizationModelKind;
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
  const id = `cm_${createHash('sha256')
    .update(JSON.stringify({ organization: o.organization, base: base.file.id, settings: made.settings }))
    .digest('hex')
    .slice(0, 16)}`;
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
