// A drift report (GET /api/jobs/{id}/result's summary.drift, a week of GET
// /api/organizations/{id}/performance) in words: the verdict and what decided it (the outcomes
// measured, or without them the scores, unseen values or amounts), what the checks found, and what
// the calibrated scores promise. `degraded` and `shifted` are warnings; `ok` is one quiet paragraph.
// The rules are the service's (docs/model.md, Drift).

import type { DriftReport } from './contract.ts';
import { h, pct } from './dom.ts';

type Measured = NonNullable<DriftReport['measured']>;
/** The outcomes' figures with what the test figures allow: present whenever the outcomes decided
 *  the verdict (basis `outcomes`, so every `degraded`). */
type Judged = Measured & { allowed: NonNullable<Measured['allowed']> };
const judged = (d: DriftReport): Judged | null => (d.measured?.allowed ? { ...d.measured, allowed: d.measured.allowed } : null);

const feature = (name: string) => name.replaceAll('_', ' ');

/** The basis of a verdict in a few words, as the Overview's table shows it. */
export const BASIS_WORDS: Record<string, string> = {
  outcomes: 'measured on outcomes',
  scores: 'by the scores’ spread',
  categories: 'by unseen values',
  features: 'by the amounts',
};

/** What the checks without outcomes found (a report's `signals`), as sentence parts: the scores'
 *  spread, values never seen, then the payment's own features that moved. */
export function driftSignals(d: DriftReport): string[] {
  const signals = d.signals;
  const parts: string[] = [];
  if (signals.includes('score_psi'))
    parts.push(`the scores are spread unlike on the validation data where the model's answers differ (PSI ${d.score_psi.toFixed(2)})`);
  if (signals.includes('unseen_categories')) {
    const values = [...d.unseen_categories.payment_type.map((v) => `payment type ${v}`), ...d.unseen_categories.location.map((v) => `location ${v}`)];
    parts.push(`${pct(d.unseen_share, 0)} of the rows have values the model never saw (${values.slice(0, 5).join(', ')}${values.length > 5 ? ', …' : ''})`);
  }
  const moved = d.features.filter((f) => signals.includes(`feature:${f.feature}`));
  if (moved.length)
    parts.push(
      `the ${moved.map((f) => `${feature(f.feature)} (PSI ${f.psi.toFixed(2)}, ${pct(f.out_of_range_share, 0)} beyond the training range)`).join(' and ')} ${moved.length === 1 ? 'is' : 'are'} unlike the training data`,
    );
  return parts;
}

/** What the calibrated scores promise, as a sentence (no outcome used). */
function estimate(d: DriftReport): string {
  const e = d.estimated;
  if (e.precision === null || e.recall === null)
    return `If the scores are right, about ${pct(e.fraud_rate, 2)} of these payments are fraud, and none was flagged.`;
  return `If the scores are right, about ${pct(e.fraud_rate, 2)} of these payments are fraud, and flagging (review or block) ${pct(e.flagged_share, 1)} of them catches about ${pct(e.recall, 0)} of it at a precision of about ${pct(e.precision, 0)} (estimated from the calibrated scores alone).`;
}

/** The measured figures against what the test figures allow, as a sentence part. */
function measuredFigures(m: Judged): string {
  const a = m.allowed;
  return `average precision ${m.average_precision.toFixed(3)} (at least ${a.average_precision_min.toFixed(3)} expected), calibration error ${m.expected_calibration_error.toFixed(4)} (at most ${a.expected_calibration_error_max.toFixed(4)} expected)`;
}

/** The verdict in words (a warning unless ok); nothing without a report. */
export function driftNotice(d: DriftReport | null | undefined, what: string): HTMLElement | null {
  if (!d) return null;
  const signals = driftSignals(d);
  const attrs = { 'data-verdict': d.verdict, 'data-basis': d.basis };
  const m = judged(d);
  if (d.verdict === 'degraded' && m) {
    return h(
      'div',
      { class: 'warning drift-warning', role: 'status', ...attrs },
      h('strong', {}, "Degraded: measured on this data's outcomes, the model does worse than its test figures allow."),
      h(
        'p',
        {},
        `On ${what}'s ${m.fraud.toLocaleString('en')} fraud and ${m.legit.toLocaleString('en')} legitimate outcomes: ${measuredFigures(m)}; ROC AUC ${m.roc_auc.toFixed(3)}.`,
      ),
      signals.length ? h('p', {}, `The data also differs from what the model was trained on: ${signals.join('; ')}.`) : null,
      h('p', {}, 'Do not act on these scores as they are: retrain on data like this, or set the thresholds against these outcomes.'),
    );
  }
  if (d.verdict === 'shifted') {
    return h(
      'div',
      { class: 'warning drift-warning', role: 'status', ...attrs },
      h('strong', {}, 'Drift: these scores are outside what the model was validated on.'),
      h('p', {}, `No outcomes to measure with, so the data decides: in ${what}, ${signals.join('; ')}.`),
      h(
        'p',
        {},
        `The scores, decisions and reasons are what the model computes, but nothing measured how good they are on data like this. ${estimate(d)} Check a sample by hand, or report outcomes, before acting on them.`,
      ),
    );
  }
  if (d.basis === 'outcomes' && m) {
    return h(
      'p',
      { class: 'muted drift-ok', ...attrs },
      `Measured on ${what}'s ${m.fraud.toLocaleString('en')} fraud and ${m.legit.toLocaleString('en')} legitimate outcomes, the model does as its test figures allow: ${measuredFigures(m)}.${signals.length ? ` The data differs from the training data (${signals.join('; ')}), but the outcomes show the answers still hold.` : ''}`,
    );
  }
  return h(
    'p',
    { class: 'muted drift-ok', ...attrs },
    `No outcomes to measure with: the scores, payment types, locations and amounts of ${what} look like the data the model was validated on (score PSI ${d.score_psi.toFixed(2)}; 0.25 or more would be a major shift). ${estimate(d)}`,
  );
}
