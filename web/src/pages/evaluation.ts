// Evaluation: the published results of the loaded model, each labelled with its split: metrics per
// split, the comparisons (ablation and baselines), the three modes with whether each still meets its
// target, ROC, precision–recall and reliability curves and score histograms (test split),
// limitations, and ring detection.

import { api } from '../api.ts';
import { histogram, lineChart } from '../chart.ts';
import { errorBox, h, num, pct, table } from '../dom.ts';

type Rec = Record<string, any>;

export async function evaluationPage(root: HTMLElement): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading the evaluation…'));
  try {
    const [overview, charts, limits, rings, thresholds] = await Promise.all([
      api<Rec>('/api/metrics/overview'),
      api<Rec>('/api/metrics/charts'),
      api<Rec>('/api/metrics/limitations'),
      api<Rec>('/api/metrics/rings'),
      api<Rec>('/api/risk/thresholds'),
    ]);
    const splits = ['validation', 'test'] as const;
    const metricRows: [string, string][] = [
      ['rows', 'Rows'], ['fraud_rate', 'Fraud rate'], ['roc_auc', 'ROC AUC'], ['average_precision', 'Average precision'], ['brier', 'Brier score'],
      ['expected_calibration_error', 'Calibration error (ECE)'], ['recall_at_1pct_fpr', 'Recall at 1 % false positives'],
    ];
    const cmp = overview.comparisons as Rec;
    const modes = thresholds.modes as Rec;
    root.replaceChildren(
      h('h2', {}, `Evaluation of ${overview.model_id}`),
      h('p', { class: 'muted' }, 'Every number is labelled with the split it was measured on; the test split was never used to fit anything.'),
      h('div', { class: 'card' }, h('h3', {}, 'Metrics per split'), table(['Metric', ...splits], metricRows.map(([k, label]) => [label, ...splits.map((s) => fmt(k, overview.splits[s][k]))]))),
      h(
        'div',
        { class: 'card' },
        h('h3', {}, `Comparisons (${cmp.split} split)`),
        table(['Model', 'ROC AUC', 'Average precision'], Object.entries(cmp).filter(([k]) => k !== 'split').map(([k, v]) => [k.replaceAll('_', ' '), num((v as Rec).roc_auc), num((v as Rec).average_precision)])),
      ),
      h(
        'div',
        { class: 'card' },
        h('h3', {}, 'Modes (test split)'),
        table(['Mode', 'Review at', 'Block at', 'Target', 'Measured', 'Precision', 'Recall', 'Meets target'], Object.entries(modes).map(([m, v]) => [m, pct((v as Rec).review_threshold), pct((v as Rec).block_threshold), `${(v as Rec).target.metric} ≥ ${(v as Rec).target.value}`, num((v as Rec).measured), num((v as Rec).precision), num((v as Rec).recall), (v as Rec).meets_target === null ? 'unknown' : (v as Rec).meets_target ? 'yes' : 'no'])),
      ),
      h(
        'div',
        { class: 'charts', id: 'charts' },
        figure(lineChart('ROC curve', `True against false positive rate on the ${charts.split} split.`, 'false positive rate', 'true positive rate', (charts.roc as Rec[]).map((p) => [p.fpr, p.tpr]), { diagonal: true }), `ROC (${charts.split})`),
        figure(lineChart('Precision–recall curve', `Precision against recall on the ${charts.split} split.`, 'recall', 'precision', (charts.precision_recall as Rec[]).map((p) => [p.recall, p.precision])), `Precision–recall (${charts.split})`),
        figure(lineChart('Reliability', `Observed fraud rate against the predicted probability, per bin, on the ${charts.split} split; the diagonal is perfect calibration.`, 'predicted', 'observed', (charts.reliability as Rec[]).filter((b) => b.predicted !== null && b.observed !== null).map((b) => [b.predicted, b.observed]), { diagonal: true, dots: true }), `Reliability (${charts.split})`),
        figure(histogram('Score histograms', `Share of fraud and of legitimate payments per score bin on the ${charts.split} split.`, charts.score_histograms.edges, { name: 'fraud', counts: charts.score_histograms.fraud }, { name: 'legitimate', counts: charts.score_histograms.legitimate }), `Scores by class (${charts.split})`),
      ),
      h('div', { class: 'card' }, h('h3', {}, 'Limitations'), h('ul', { id: 'limitations' }, ...(limits.limitations as string[]).map((l) => h('li', {}, l)))),
      h(
        'div',
        { class: 'card' },
        h('h3', {}, 'Rings'),
        h('p', {}, `Evaluation: ${rings.evaluation.flagged_groups} groups flagged (windows ${rings.evaluation.windows}); precision ${num(rings.evaluation.precision)}, recall ${num(rings.evaluation.recall)} against ${rings.evaluation.true_rings} simulated rings.`),
        h('p', { class: 'muted' }, `${rings.live.note} Flagged on this server: ${rings.live.flagged_groups}.`),
      ),
    );
  } catch (e) {
    root.replaceChildren(errorBox(e));
  }
}

function fmt(key: string, v: number | null): string {
  if (v === null || v === undefined) return '—';
  if (key === 'rows') return v.toLocaleString('en');
  if (key === 'fraud_rate') return pct(v, 2);
  return num(v, 4);
}

function figure(svg: SVGSVGElement, caption: string): HTMLElement {
  const f = h('figure', { class: 'card chart-card' });
  f.append(svg, h('figcaption', {}, caption));
  return f;
}
