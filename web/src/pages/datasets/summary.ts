// What a finished scoring job found: the decisions and risk bands with their shares, drift from
// what the model learned on, the metrics when the file is labelled, and a warning in words when
// the scores look unreliable for this file, since a file from another kind of system (a PaySim
// simulation, account transfers) can look unusual to a model that learned from card payments.

import type { JobSummaries } from '../../contract.ts';
import { h, num, pct, table } from '../../dom.ts';
import { driftNotice } from '../../drift.ts';
import { plural } from './words.ts';

/** Below this ROC AUC a labelled file's ranking is close to chance. */
const POOR_AUC = 0.6;

/** Decisions and bands with their shares, the metrics on a labelled file, and a warning in words
 *  when the scores look unreliable for this file. */
export function summaryCards(s: JobSummaries['score'] | null): HTMLElement[] {
  if (!s) return [];
  const total = Number(s.rows) || 0;
  const share = (n: number) => (total ? pct(n / total, 1) : '—');
  const counts = (names: string[], by: Partial<Record<string, number>>) =>
    table(
      names.map((x) => x),
      [names.map((x) => `${Number(by[x] ?? 0).toLocaleString('en')} (${share(Number(by[x] ?? 0))})`)],
    );
  const m = s.metrics;
  const why: string[] = [];
  if (m && m.roc_auc < POOR_AUC)
    why.push(`the model ranks your labelled fraud barely better than chance (ROC AUC ${num(m.roc_auc, 2)}, where 0.5 is a coin toss)`);
  const blocked = Number(s.decisions?.block ?? 0);
  if (total && blocked / total > 0.5) why.push(`most rows (${share(blocked)}) were blocked`);
  const warning = why.length
    ? h(
        'div',
        { class: 'warning', id: 'unreliable', role: 'status' },
        h('strong', {}, `These scores look unreliable for this file: ${why.join('; and ')}.`),
        h(
          'p',
          {},
          'The model learned from card payments. Files from other kinds of systems (for example a simulation like PaySim, or account transfers) can look unusual to it. Use these scores with care, and check a sample by hand before acting on them.',
        ),
      )
    : null;
  const drift = driftNotice(s.drift, 'this file');
  return [
    ...(drift && s.drift?.verdict !== 'ok' ? [drift] : []),
    ...(warning ? [warning] : []),
    h(
      'div',
      { class: 'card', id: 'job-summary' },
      h('h2', {}, `What the model decided on ${plural(total, 'row')}`),
      h(
        'div',
        { class: 'summary-grid' },
        h('div', { id: 'summary-decisions' }, h('h3', {}, 'Decisions'), counts(['approve', 'review', 'block'], s.decisions ?? {})),
        h('div', { id: 'summary-bands' }, h('h3', {}, 'Risk bands'), counts(['low', 'medium', 'high', 'critical'], s.bands ?? {})),
      ),
      s.cold_start_rows
        ? h(
            'p',
            { class: 'muted' },
            `${plural(Number(s.cold_start_rows), 'row')} had too little earlier history in the file for their customer and merchant, and were scored by the cold-start rule.`,
          )
        : null,
      s.drift?.verdict === 'ok' ? drift : null,
    ),
    ...(m
      ? [
          h(
            'div',
            { class: 'card', id: 'file-metrics' },
            h('h2', {}, 'How the model did on this file'),
            h('p', { class: 'muted' }, `${pct(m.fraud_rate, 2)} of the rows are labelled fraud.`),
            table(
              ['ROC AUC', 'Average precision', 'Brier', 'Calibration error', 'Precision', 'Recall'],
              [[num(m.roc_auc), num(m.average_precision), num(m.brier, 4), num(m.expected_calibration_error, 4), num(m.precision), num(m.recall)]],
            ),
          ),
        ]
      : []),
  ];
}
