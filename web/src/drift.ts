// A drift report (GET /api/jobs/{id}/result's summary.drift, a week of GET
// /api/organizations/{id}/performance) in words: when the verdict is not `ok`, a warning that says
// plainly that the scores are outside what the model was validated on, and why; when it is, one
// quiet line with the largest shift. The thresholds are the service's (docs/model.md, Drift).

import { h, pct } from './dom.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rec = Record<string, any>;

const feature = (name: string) => name.replaceAll('_', ' ');

/** A shifted verdict's reasons as sentence parts: values never seen, values out of range, the
 *  scores' spread, then the shifted important features together (the three largest named). */
export function driftReasons(d: Rec): string[] {
  const reasons = d.reasons as string[];
  const parts: string[] = [];
  if (reasons.includes('unseen_categories')) {
    const values = [...d.unseen_categories.payment_type.map((v: string) => `payment type ${v}`), ...d.unseen_categories.location.map((v: string) => `location ${v}`)];
    parts.push(`${pct(d.unseen_share, 0)} of the rows have values the model never saw (${values.slice(0, 5).join(', ')}${values.length > 5 ? ', …' : ''})`);
  }
  if (reasons.includes('out_of_range')) parts.push(`${pct(d.out_of_range_share, 0)} of the rows have an important feature outside the range the model was trained on`);
  if (reasons.includes('score_psi')) parts.push(`the scores are spread unlike on the validation data (PSI ${d.score_psi.toFixed(2)})`);
  const shifted = (d.features as Rec[]).filter((f) => reasons.includes(`feature_psi:${f.feature}`));
  if (shifted.length) {
    const named = shifted.slice(0, 3).map((f) => `${feature(f.feature)} ${f.psi.toFixed(2)}`).join(', ');
    parts.push(`${shifted.length === 1 ? 'an important feature is' : `${shifted.length} important features are`} distributed unlike in the validation data (PSI ${named}${shifted.length > 3 ? ', …' : ''})`);
  }
  return parts;
}

/** The warning (shifted) or a quiet line (ok); nothing without a report. */
export function driftNotice(d: Rec | null | undefined, what: string): HTMLElement | null {
  if (!d) return null;
  if (d.verdict === 'ok') {
    const top = (d.features as Rec[]).find((f) => (d.top_features as string[]).includes(f.feature));
    return h('p', { class: 'muted drift-ok', 'data-verdict': 'ok' }, `Drift: ${what} looks like the data the model was validated on (score PSI ${d.score_psi.toFixed(2)}${top ? `; largest shift among the important features: ${feature(top.feature)}, PSI ${top.psi.toFixed(2)}` : ''}; 0.25 or more would be a major shift).`);
  }
  const reasons = driftReasons(d);
  return h(
    'div',
    { class: 'warning drift-warning', role: 'status', 'data-verdict': d.verdict },
    h('strong', {}, `Drift: these scores are outside what the model was validated on.`),
    h('p', {}, `In ${what}, ${reasons.join('; ')}.`),
    h('p', {}, 'The scores, decisions and reasons are what the model computes, but nothing measured how good they are on data like this. Check a sample by hand before acting on them.'),
  );
}
