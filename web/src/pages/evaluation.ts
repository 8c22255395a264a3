// Evaluation: the published results of the loaded model, each labelled with its split: metrics per
// split, the comparisons (ablation and baselines) and the three modes, each with a sentence saying
// what it means (including which modes miss their targets), ROC, precision–recall and reliability
// curves and score histograms (test split) with a chosen mode's review and block thresholds marked
// and every point's numbers in a tooltip, limitations, and the flagged rings with their members.

import { api } from '../api.ts';
import { histogram, lineChart, type LegendItem, type Marker } from '../chart.ts';
import type { MetricsCharts, MetricsLimitations, MetricsOverview, MetricsRings, Thresholds } from '../contract.ts';
import { errorBox, h, num, pct, table } from '../dom.ts';
import './pages.css';

// What this page reads of the parts of the evaluation that the service publishes as it finds them
// in the model's metrics.json, whose schema (MetricsFileSchema) leaves them open: a split's
// bootstrap intervals, the comparisons, the seed spread and the evaluation's ring results.
type Split = MetricsOverview['splits']['test'];
type Intervals = Partial<Record<string, [number | null, number | null]>>;
interface Compared {
  roc_auc: number | null;
  average_precision: number | null;
}
interface Gap {
  difference: number | null;
  interval: [number | null, number | null];
}
type Comparisons = { split: string; stack_minus_ablation?: { average_precision: Gap; roc_auc: Gap } } & Record<string, unknown>;
interface Spread {
  min: number | null;
  max: number | null;
}
interface SeedSpread {
  runs: unknown[];
  roc_auc: Spread;
  average_precision: Spread;
  recall_at_1pct_fpr: Spread;
}
type RingEvaluation = {
  flagged_groups: number;
  windows: string;
  precision: number | null;
  recall: number | null;
  true_rings: number;
};
type ModeThresholds = Thresholds['modes'][string];

const MODE_LABEL: Record<string, string> = { balanced: 'balanced', high_precision: 'high precision', high_recall: 'high recall' };
const modeLabel = (m: string) => MODE_LABEL[m] ?? m.replaceAll('_', ' ');
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export async function evaluationPage(root: HTMLElement): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading the evaluation…'));
  try {
    const [overview, charts, limits, rings, thresholds] = await Promise.all([
      api<MetricsOverview>('/api/metrics/overview'),
      api<MetricsCharts>('/api/metrics/charts'),
      api<MetricsLimitations>('/api/metrics/limitations'),
      api<MetricsRings>('/api/metrics/rings'),
      api<Thresholds>('/api/risk/thresholds'),
    ]);
    const splits = (['train', 'validation', 'test'] as const).filter((x) => overview.splits[x]);
    // A figure with its 95 % interval when the evaluation has one.
    const withInterval = (k: string, split: Split) => {
      const i = (split.intervals as Intervals | undefined)?.[k];
      const v = split[k] as number | null;
      return i && i[0] !== null && i[1] !== null ? `${fmt(k, v)} (${fmt(k, i[0])}–${fmt(k, i[1])})` : fmt(k, v);
    };
    const metricRows: [string, string][] = [
      ['rows', 'Rows'],
      ['fraud_rate', 'Fraud rate'],
      ['roc_auc', 'ROC AUC'],
      ['average_precision', 'Average precision'],
      ['brier', 'Brier score'],
      ['expected_calibration_error', 'Calibration error (ECE)'],
      ['recall_at_1pct_fpr', 'Recall at 1 % false positives'],
    ];
    const cmp = overview.comparisons as Comparisons;
    const seeds = overview.seed_spread as SeedSpread | null;
    const modes = thresholds.modes;
    const chartBox = h('div', { class: 'charts eval-charts', id: 'charts' });
    const picker = h(
      'select',
      { id: 'threshold-mode', name: 'threshold-mode' },
      ...Object.keys(modes).map((m) => h('option', { value: m, selected: m === thresholds.default_mode }, modeLabel(m))),
    );
    const drawCharts = () => chartBox.replaceChildren(...chartFigures(charts, picker.value, modes[picker.value]!));
    picker.addEventListener('change', drawCharts);
    drawCharts();
    root.replaceChildren(
      h('h1', { class: 'page-title' }, `Evaluation of ${overview.model_id}`),
      h('p', { class: 'muted' }, 'Every number is labelled with the split it was measured on; the test split was never used to fit anything.'),
      h(
        'div',
        { class: 'card' },
        h('h2', { class: 'card-title' }, 'Metrics per split'),
        table(
          ['Metric', ...splits],
          metricRows.map(([k, label]) => [label, ...splits.map((s) => withInterval(k, overview.splits[s]))]),
        ),
        h(
          'p',
          { class: 'muted', id: 'intervals-meaning' },
          'In brackets: the 95 % bootstrap interval over the split’s rows, what another sample of the same weeks could have given. Train is what the boosters were fitted on; its lead over validation and test is over-fitting and the later weeks’ other mix of fraud.',
        ),
        seeds
          ? h(
              'p',
              { class: 'muted', id: 'seed-spread' },
              `The same pipeline on ${seeds.runs.length} simulator and training seeds (this model is the first): test ROC AUC ${num(seeds.roc_auc.min)}–${num(seeds.roc_auc.max)}, average precision ${num(seeds.average_precision.min)}–${num(seeds.average_precision.max)}, recall at 1 % false positives ${num(seeds.recall_at_1pct_fpr.min)}–${num(seeds.recall_at_1pct_fpr.max)}. Another seed moves a figure more than another sample of rows does.`,
            )
          : null,
        overview.selection
          ? h(
              'p',
              { class: 'muted', id: 'selection' },
              `Settings chosen on the ${overview.selection.split} split only: ${overview.selection.settings_tried} settings tried (the defaults first), ${overview.selection.models_compared} (setting, number of trees) models compared; the boosters have ${overview.selection.chosen.iterations} trees of ${overview.selection.chosen.params.num_leaves} leaves at learning rate ${overview.selection.chosen.params.learning_rate}. The more models compared, the more the best validation figure flatters the choice: judge it on test.`,
            )
          : null,
      ),
      h(
        'div',
        { class: 'card' },
        h('h2', { class: 'card-title' }, `Comparisons (${cmp.split} split)`),
        table(
          ['Model', 'ROC AUC', 'Average precision'],
          Object.entries(cmp)
            .filter(([k]) => k !== 'split' && k !== 'stack_minus_ablation')
            .map(([k, v]) => [k.replaceAll('_', ' '), num((v as Compared).roc_auc), num((v as Compared).average_precision)]),
        ),
        h('p', { class: 'explain', id: 'comparisons-meaning' }, comparisonsSentence(cmp)),
      ),
      h(
        'div',
        { class: 'card' },
        h('h2', { class: 'card-title' }, `Modes (${thresholds.split} split)`),
        table(
          [
            'Mode',
            'Review at',
            'Block at',
            'Flagged (review or block)',
            'Blocked',
            'Fraud blocked per 1,000',
            'Target',
            'Measured',
            'Precision',
            'Recall',
            'Meets target',
          ],
          Object.entries(modes).map(([m, v]) => [
            modeLabel(m),
            pct(v.review_threshold),
            pct(v.block_threshold),
            v.review_rate === null
              ? '—'
              : v.review_warning
                ? h('strong', { class: 'misses', title: v.review_warning }, `${pct(v.review_rate)} (over 10 %)`)
                : pct(v.review_rate),
            v.block_rate === null ? '—' : pct(v.block_rate),
            num(v.fraud_caught_per_1000, 1),
            `${v.target.metric} ≥ ${v.target.value}`,
            num(v.measured),
            num(v.precision),
            num(v.recall),
            v.meets_target === null ? 'unknown' : v.meets_target ? 'yes' : h('strong', { class: 'misses' }, 'no'),
          ]),
        ),
        h('p', { class: 'explain', id: 'modes-meaning' }, ...modesSentences(modes, thresholds.split)),
      ),
      h(
        'div',
        { class: 'chart-controls' },
        h('label', { class: 'field inline', for: 'threshold-mode' }, h('span', {}, 'Thresholds marked on the charts:'), picker),
        h(
          'p',
          { class: 'muted' },
          'A circle marks where a curve passes the review threshold, a square the block threshold (read off the drawn curve; the modes table has the exact figures of blocking); on the score axes they are the dashed and solid lines. Hover a point, bar or mark for its numbers.',
        ),
      ),
      chartBox,
      h(
        'div',
        { class: 'card' },
        h('h2', { class: 'card-title' }, 'Limitations'),
        h('ul', { id: 'limitations' }, ...limits.limitations.map((l) => h('li', {}, l))),
      ),
      ringsCard(rings),
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

const COMPARED: Record<string, string> = {
  stack: 'the stack is the served model (four channel boosters trained together, combined by a weighted sum of their log-odds)',
  ablation_single_booster_all_features:
    'the ablation is one booster over all features at once, with the same settings; it may mix channels in a tree, which the stack cannot, and gives no per-channel answer',
  baseline_amount_only: 'the amount-only baseline uses the amount alone as the score',
  baseline_logistic_regression: 'the logistic-regression baseline is a linear model over all features',
};

function comparisonsSentence(cmp: Comparisons): string {
  const parts = Object.keys(cmp)
    .filter((k) => k !== 'split' && k !== 'stack_minus_ablation')
    .map((k) => COMPARED[k] ?? `${k.replaceAll('_', ' ')} is another model`);
  const gap = cmp.stack_minus_ablation;
  const interval = (g: Gap) => `${num(g.difference)} (95 % interval ${num(g.interval[0])} to ${num(g.interval[1])})`;
  const gapSentence = gap
    ? ` The stack minus the ablation, on the same rows: average precision ${interval(gap.average_precision)}, ROC AUC ${interval(gap.roc_auc)}; what the per-channel design costs.`
    : '';
  return `What this compares: every model was fitted on the same training split and is measured on the ${cmp.split} split; ${parts.join('; ')}. Higher is better in both columns: ROC AUC is the chance that a random fraud scores above a random legitimate payment (0.5 is chance), and average precision summarises the precision–recall curve (the fraud rate is chance).${gapSentence}`;
}

function modesSentences(modes: Record<string, ModeThresholds>, split: string): string[] {
  const out = [
    `What a mode is: a pair of thresholds chosen on the validation split for a stated target; a score at or above “review at” is sent to review, at or above “block at” it is blocked. Flagged and blocked are the shares of the ${split} split's transactions each threshold catches: what the mode costs in traffic (a review threshold is never set to flag more than 5 % of validation traffic). Measured, precision, recall and fraud blocked per 1,000 transactions are those of blocking, on the ${split} split. Balanced's target (f1_ratio) is an F1 of at least 90 % of the best any threshold reaches.`,
  ];
  const heavy = Object.entries(modes).filter(([, v]) => v.review_warning);
  for (const [m, v] of heavy) out.push(` ${modeLabel(m)}: ${v.review_warning}`);
  const missed = Object.entries(modes).filter(([, v]) => v.meets_target === false);
  if (missed.length === 0) out.push(` Every mode meets its target on the ${split} split.`);
  else
    out.push(
      ` ${cap(missed.map(([m, v]) => `${modeLabel(m)} (${v.target.metric} ${num(v.measured)} against ${v.target.value})`).join(' and '))} ${missed.length === 1 ? 'does' : 'do'} not meet ${missed.length === 1 ? 'its target' : 'their targets'} on the ${split} split: thresholds chosen on validation need not hold on later weeks, so such a mode blocks with less ${[...new Set(missed.map(([, v]) => (v.target.metric === 'f1_ratio' ? 'F1' : v.target.metric)))].join(' or ')} than it promises.`,
    );
  return out;
}

/** Where a curve whose points run from the highest threshold down passes `t`: between the last
 *  point at or above it and the next, in proportion, so the mark lies on the drawn line. */
function onCurve(points: { threshold: number; x: number; y: number }[], t: number): { x: number; y: number } {
  const first = points[0]!;
  if (t >= first.threshold) return first;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    if (a.threshold >= t && t > b.threshold) {
      const f = a.threshold === b.threshold ? 0 : (a.threshold - t) / (a.threshold - b.threshold);
      return { x: a.x + f * (b.x - a.x), y: a.y + f * (b.y - a.y) };
    }
  }
  return points[points.length - 1]!;
}

function chartFigures(charts: MetricsCharts, mode: string, m: ModeThresholds): HTMLElement[] {
  const split = charts.split;
  const kinds = [
    ['review', m.review_threshold],
    ['block', m.block_threshold],
  ] as const;
  const data = (kind: string, t: number) => ({ mode, kind, threshold: String(t) });
  const curveMarkers = (points: { threshold: number; x: number; y: number }[], xName: string, yName: string): Marker[] =>
    kinds.map(([kind, t]) => {
      const p = onCurve(points, t);
      return {
        kind,
        x: p.x,
        y: p.y,
        title: `${modeLabel(mode)} mode, ${kind} at ${pct(t)}: ${xName} ≈ ${num(p.x)}, ${yName} ≈ ${num(p.y)} (read off the drawn curve, which joins its published points with straight lines)`,
        data: data(kind, t),
      };
    });
  const lineMarkers: Marker[] = kinds.map(([kind, t]) => ({ kind, x: t, title: `${modeLabel(mode)} mode, ${kind} at ${pct(t)}`, data: data(kind, t) }));
  const onCurveLegend: LegendItem[] = [
    { name: 'review', cls: 'threshold review', shape: 'dot' },
    { name: 'block', cls: 'threshold block', shape: 'box' },
  ];
  const lineLegend: LegendItem[] = [
    { name: 'review', cls: 'threshold review', shape: 'line' },
    { name: 'block', cls: 'threshold block', shape: 'line' },
  ];

  const roc = charts.roc.map((p) => ({ threshold: p.threshold, x: p.fpr, y: p.tpr }));
  const pr = charts.precision_recall.map((p) => ({ threshold: p.threshold, x: p.recall, y: p.precision }));
  const bins = charts.reliability.filter((b): b is typeof b & { predicted: number; observed: number } => b.predicted !== null && b.observed !== null);
  const hist = charts.score_histograms;
  return [
    figure(
      lineChart(
        'ROC curve',
        `True against false positive rate on the ${split} split, ${modeLabel(mode)} thresholds marked.`,
        'false positive rate',
        'true positive rate',
        roc.map((p) => ({ x: p.x, y: p.y, tip: `threshold ${num(p.threshold)}: false positive rate ${num(p.x)}, true positive rate ${num(p.y)}` })),
        {
          diagonal: true,
          legend: [{ name: 'ROC curve', cls: 'curve', shape: 'line' }, { name: 'chance', cls: 'reference', shape: 'line' }, ...onCurveLegend],
          markers: curveMarkers(roc, 'false positive rate', 'true positive rate'),
        },
      ),
      `ROC (${split})`,
    ),
    figure(
      lineChart(
        'Precision–recall curve',
        `Precision against recall on the ${split} split, ${modeLabel(mode)} thresholds marked.`,
        'recall',
        'precision',
        pr.map((p) => ({ x: p.x, y: p.y, tip: `threshold ${num(p.threshold)}: recall ${num(p.x)}, precision ${num(p.y)}` })),
        {
          legend: [{ name: 'precision–recall', cls: 'curve', shape: 'line' }, ...onCurveLegend],
          markers: curveMarkers(pr, 'recall', 'precision'),
        },
      ),
      `Precision–recall (${split})`,
    ),
    figure(
      lineChart(
        'Reliability',
        `Observed fraud rate against the predicted probability, per bin, on the ${split} split; the diagonal is perfect calibration; ${modeLabel(mode)} thresholds as vertical lines.`,
        'predicted probability (score)',
        'observed fraud rate',
        bins.map((b) => ({
          x: b.predicted,
          y: b.observed,
          tip: `scores ${b.bin[0]} to ${b.bin[1]}: predicted ${num(b.predicted)}, observed ${num(b.observed)} (${Number(b.count).toLocaleString('en')} payments)`,
        })),
        {
          diagonal: true,
          dots: true,
          legend: [{ name: 'observed', cls: 'dot', shape: 'dot' }, { name: 'calibrated', cls: 'reference', shape: 'line' }, ...lineLegend],
          markers: lineMarkers,
        },
      ),
      `Reliability (${split})`,
    ),
    figure(
      histogram(
        'Score histograms',
        `Share of fraud and of legitimate payments per score bin on the ${split} split; ${modeLabel(mode)} thresholds as vertical lines.`,
        hist.edges,
        { name: 'fraud', counts: hist.fraud },
        { name: 'legitimate', counts: hist.legitimate },
        { legend: lineLegend, markers: lineMarkers },
      ),
      `Scores by class (${split})`,
    ),
  ];
}

function figure(svg: SVGSVGElement, caption: string): HTMLElement {
  const f = h('figure', { class: 'card chart-card' });
  f.append(svg, h('figcaption', {}, caption));
  return f;
}

function ringsCard(rings: MetricsRings): HTMLElement {
  const ev = rings.evaluation as RingEvaluation;
  const live = rings.live;
  const groups = live.groups ?? [];
  const ids = (list: string[]) => h('span', { class: 'ids' }, list.join(', '));
  return h(
    'div',
    { class: 'card', id: 'rings' },
    h('h2', { class: 'card-title' }, 'Rings'),
    h(
      'p',
      { class: 'explain' },
      'A ring is a group of customers and merchants that pay each other within one weekly window (a community of the customer–merchant graph) and whose payments with a known outcome are mostly fraud. A score only says that its merchant or channel belongs to such a group, never that the payment itself does.',
    ),
    h(
      'p',
      {},
      `Evaluation: ${ev.flagged_groups} groups flagged (windows ${ev.windows}); precision ${num(ev.precision)}, recall ${num(ev.recall)} against ${ev.true_rings} simulated rings.`,
    ),
    h(
      'p',
      { class: 'muted' },
      `${live.note} Flagged: ${live.flagged_groups}${groups.length < live.flagged_groups ? `, the latest ${groups.length} listed` : ''}.`,
    ),
    groups.length === 0
      ? h('p', { class: 'muted' }, 'No group flagged.')
      : h(
          'div',
          { id: 'ring-list' },
          table(
            ['Ring', 'Window (UTC)', 'Members', 'Customers', 'Merchants', 'Main channel', 'Fraud rate'],
            groups.map((g) => [
              g.ring_id,
              `${String(g.window_start).slice(0, 10)} to ${String(g.window_end).slice(0, 10)}`,
              String(g.members),
              ids(g.customer_ids ?? []),
              ids(g.merchants),
              g.main_channel ?? '—',
              pct(g.fraud_rate),
            ]),
          ),
        ),
  );
}
