// Overview: how the organization's traffic and the model's decisions on it move week by week, from
// the performance endpoint (GET /api/organizations/{id}/performance): volume, review and block
// rates, the score distribution (p10, median, p90, p99), outcomes reported, and, for the chosen
// mode, precision and recall of blocking on the transactions with an outcome. Charts, and the same
// numbers in a table beneath them.

import { api } from '../api.ts';
import { niceRate, niceTop, seriesChart } from '../chart.ts';
import type { Performance, Week } from '../contract.ts';
import { errorBox, h, num, pct, table } from '../dom.ts';
import { BASIS_WORDS, driftNotice } from '../drift.ts';
import { organizationFor } from '../org.ts';
import type { Route } from '../route.ts';

const MODES = ['balanced', 'high_precision', 'high_recall'] as const;

export async function overviewPage(root: HTMLElement, route: Route): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'overview', 'Overview');
    if (!chosen) return;
    const weeksWanted = Number(route.query.get('weeks') ?? 12);
    const mode = (MODES as readonly string[]).includes(route.query.get('mode') ?? '') ? (route.query.get('mode') as (typeof MODES)[number]) : 'balanced';
    const report = await api<Performance>(
      `/api/organizations/${encodeURIComponent(chosen.org.id)}/performance?weeks=${Number.isInteger(weeksWanted) && weeksWanted >= 1 && weeksWanted <= 104 ? weeksWanted : 12}`,
    );
    const weeks = report.weeks;
    const names = weeks.map((w) => w.week.replace(/^\d{4}-/, ''));
    const rate = (v: number) => pct(v, v > 0 && v < 0.1 ? 1 : 0);
    const modeSelect = h(
      'select',
      { id: 'overview-mode', name: 'mode' },
      ...MODES.map((m) => h('option', { value: m, selected: m === mode }, m.replace('_', ' '))),
    );
    modeSelect.addEventListener('change', () => {
      location.hash = `#/overview?org=${encodeURIComponent(chosen.org.id)}&mode=${modeSelect.value}`;
    });
    const figure = (svg: SVGSVGElement, caption: string) => {
      const f = h('figure', { class: 'card chart-card' });
      f.append(svg, h('figcaption', {}, caption));
      return f;
    };
    const total = weeks.reduce((s, w) => s + w.transactions, 0);
    const labelled = weeks.reduce((s, w) => s + w.labelled, 0);
    const q = (w: Week, k: string) => (w.score_quantiles ? w.score_quantiles[k] : null);
    const byMode = (w: Week, k: 'precision' | 'recall') => w.by_mode[mode]?.[k] ?? null;
    // Drift of the newest week that has a report: what the service sees now.
    const drifted = [...weeks].reverse().find((w) => w.drift);
    root.replaceChildren(
      h('h1', {}, 'Overview'),
      h('div', { class: 'actions' }, chosen.picker, h('label', { class: 'field inline' }, h('span', {}, 'Mode'), modeSelect)),
      h(
        'p',
        { class: 'muted', id: 'overview-summary' },
        `${chosen.org.name}, the last ${weeks.length} ISO weeks (Monday to Sunday, UTC), scored with ${report.model_id}: ${total.toLocaleString('en')} scored transactions, ${labelled.toLocaleString('en')} with an outcome reported. Rates are shares of each week's decisions; precision and recall are of blocking in the ${mode.replace('_', ' ')} mode, on the week's transactions with an outcome, and shown once a week has ${report.min_labelled} of them with both fraud and legitimate ones.`,
      ),
      h('div', { id: 'overview-drift' }, drifted ? driftNotice(drifted.drift, `week ${drifted.week}'s traffic`) : null),
      h(
        'div',
        { class: 'overview-charts', id: 'overview-charts' },
        figure(
          seriesChart(
            'Scored transactions per week',
            'Transactions scored with the organization’s API keys, per ISO week.',
            names,
            [{ name: 'transactions', values: weeks.map((w) => w.transactions), kind: 'bar', cls: 's-volume' }],
            { top: niceTop(Math.max(...weeks.map((w) => w.transactions), 1)), format: (v) => Math.round(v).toLocaleString('en'), yLabel: 'transactions' },
          ),
          'Volume',
        ),
        figure(
          seriesChart(
            'Review and block rates per week',
            'Share of each week’s decisions that were review, and that were block.',
            names,
            [
              { name: 'review', values: weeks.map((w) => w.review_rate), kind: 'line', cls: 's-review' },
              { name: 'block', values: weeks.map((w) => w.block_rate), kind: 'line', cls: 's-block' },
            ],
            { top: niceRate(Math.max(...weeks.flatMap((w) => [w.review_rate ?? 0, w.block_rate ?? 0]), 0.01)), format: rate, yLabel: 'share of decisions' },
          ),
          'Review and block rates',
        ),
        figure(
          seriesChart(
            'Risk score distribution per week',
            'The 10th, 50th, 90th and 99th percentiles of the week’s risk scores.',
            names,
            (['p10', 'p50', 'p90', 'p99'] as const).map((k) => ({
              name: k === 'p50' ? 'median' : k,
              values: weeks.map((w) => q(w, k)),
              kind: 'line' as const,
              cls: `s-${k}`,
            })),
            { top: 1, format: (v) => pct(v, 0), yLabel: 'risk score' },
          ),
          'Score distribution',
        ),
        figure(
          seriesChart(
            'Outcomes reported per week',
            'Transactions of the week with an outcome reported, and of them fraud.',
            names,
            [
              { name: 'with an outcome', values: weeks.map((w) => w.labelled), kind: 'bar', cls: 's-labelled' },
              { name: 'fraud', values: weeks.map((w) => w.fraud), kind: 'bar', cls: 's-fraud' },
            ],
            { top: niceTop(Math.max(...weeks.map((w) => w.labelled), 1)), format: (v) => Math.round(v).toLocaleString('en'), yLabel: 'transactions' },
          ),
          'Outcomes',
        ),
        figure(
          seriesChart(
            `Precision and recall of blocking (${mode.replace('_', ' ')})`,
            'On the week’s transactions with an outcome; a gap where the week has too few outcomes.',
            names,
            [
              { name: 'precision', values: weeks.map((w) => byMode(w, 'precision')), kind: 'line', cls: 's-precision' },
              { name: 'recall', values: weeks.map((w) => byMode(w, 'recall')), kind: 'line', cls: 's-recall' },
            ],
            { top: 1, format: (v) => pct(v, 0), yLabel: 'share' },
          ),
          weeks.some((w) => byMode(w, 'precision') !== null || byMode(w, 'recall') !== null)
            ? 'Precision and recall'
            : `Precision and recall: no week has ${report.min_labelled} transactions with an outcome, both fraud and legitimate, yet`,
        ),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'weeks-title' },
        h('h2', { id: 'weeks-title' }, 'Week by week'),
        h(
          'div',
          { id: 'overview-table' },
          table(
            [
              'Week',
              'Transactions',
              'Review rate',
              'Block rate',
              'Median score',
              'p90 score',
              'With an outcome',
              'Fraud',
              'Precision',
              'Recall',
              'ROC AUC',
              'Drift',
            ],
            weeks.map((w) => {
              const [p50, p90, precision, recall] = [q(w, 'p50'), q(w, 'p90'), byMode(w, 'precision'), byMode(w, 'recall')];
              return [
                w.week,
                String(w.transactions),
                w.review_rate === null ? '—' : pct(w.review_rate),
                w.block_rate === null ? '—' : pct(w.block_rate),
                p50 === null ? '—' : pct(p50, 2),
                p90 === null ? '—' : pct(p90, 2),
                String(w.labelled),
                String(w.fraud),
                precision === null ? '—' : pct(precision),
                recall === null ? '—' : pct(recall),
                num(w.roc_auc),
                w.drift ? `${w.drift.verdict} (${BASIS_WORDS[w.drift.basis]})` : '—',
              ];
            }),
          ),
        ),
      ),
    );
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Overview'), errorBox(e));
  }
}
