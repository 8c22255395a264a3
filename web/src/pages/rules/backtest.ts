// A backtest: queued from the rule editor (a saved version, or the text as it is) or a version's
// row, it runs as a job on the service, and its report has an address of its own
// (`#/rules/backtests/{job_id}`), so it survives a reload and can be shared. While the job runs,
// its progress is polled (the fraction comes from the work itself) until it is done or the page
// shows something else. The report: what was tested and over which period, the warnings first
// (precision and recall read outcomes as known today), the matches and their outcomes, precision
// and recall each with the counts they come from, the money, the decisions it would have changed,
// a per-day chart with the same numbers in a table, the live version side by side when another
// version was tested, and examples of each outcome with the values the rule read.

import { api, ApiError, jobSummary } from '../../api.ts';
import { niceTop, seriesChart } from '../../chart.ts';
import type { Job, JobSummaries, Rule } from '../../contract.ts';
import { h, money, pct, table, utc } from '../../dom.ts';
import { backtestHref, ruleHref, rulesHref, transactionHref } from '../../links.ts';
import type { Organization } from '../../org.ts';

type BacktestReport = JobSummaries['backtest'];
/** The figures of one version in a report: the tested one (the report itself) or the live one (`compare`). */
type VersionFigures = BacktestReport | NonNullable<BacktestReport['compare']>;

export interface Period {
  from?: string | undefined;
  to?: string | undefined;
}

/** The values a rule read, as `name = value` rows (a history's fields as `customer.is_new`),
 *  each written as it would be in an expression. */
export function flatValues(values: Record<string, unknown>, prefix = ''): [string, string][] {
  return Object.entries(values).flatMap(([k, v]): [string, string][] =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? flatValues(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, JSON.stringify(v)]],
  );
}

/** Queues a backtest and opens its page. */
export async function queueBacktest(
  org: Organization,
  target: { rule_id: string; version?: number } | { expression: string; action: string },
  period: Period,
): Promise<void> {
  const body: typeof target & Period = { ...target };
  if (period.from) body.from = period.from;
  if (period.to) body.to = period.to;
  const job = await api<Job>(`/api/organizations/${encodeURIComponent(org.id)}/rules/backtests`, { method: 'POST', body });
  location.hash = backtestHref(org.id, job.id);
}

export async function backtestPage(root: HTMLElement, org: Organization, jobId: string): Promise<void> {
  const back = h('p', {}, h('a', { href: rulesHref(org.id) }, '← All rules'));
  const progress = h('progress', { id: 'backtest-progress', max: '1', value: '0', 'aria-label': 'Backtest progress' });
  const stage = h('p', { id: 'backtest-stage', class: 'muted', role: 'status', 'aria-live': 'polite' }, 'Queued');
  const running = h(
    'section',
    { class: 'card', id: 'backtest-running', 'aria-labelledby': 'backtest-running-title' },
    h('h2', { id: 'backtest-running-title' }, 'Running'),
    h('p', {}, 'Every transaction the organization scored in the period is evaluated on what its decision saw, with the lists as they were then.'),
    progress,
    stage,
  );
  const title = h('h1', {}, 'Backtest');
  root.replaceChildren(title, back, running);
  let job: Job;
  for (;;) {
    job = await api<Job>(`/api/jobs/${encodeURIComponent(jobId)}`);
    if (job.kind !== 'backtest') throw new ApiError(404, 'not_found', `Job ${jobId} is not a backtest.`, 'Open backtests from a rule’s page.');
    progress.value = job.progress;
    stage.textContent = `${job.status} · ${pct(job.progress, 0)} · ${job.elapsed_seconds} s`;
    if (job.status === 'failed') {
      running.append(h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'The backtest failed.'), h('p', {}, job.error ?? '')));
      return;
    }
    if (job.status === 'succeeded') break;
    // Stop polling once the page shows something else.
    if (!root.isConnected) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  const s = jobSummary<'backtest'>(job)!;
  const rule = s.rule.rule_id
    ? await api<Rule>(`/api/organizations/${encodeURIComponent(org.id)}/rules/${encodeURIComponent(s.rule.rule_id)}`).catch(() => undefined)
    : undefined;
  const what = s.rule.rule_id ? `${rule?.name ?? 'a deleted rule'}, version ${s.rule.version}` : 'an unsaved expression';
  title.textContent = `Backtest of ${what}`;
  if (rule) back.replaceChildren(h('a', { href: ruleHref(org.id, rule.id) }, `← ${rule.name}`));
  root.replaceChildren(title, back, ...report(org, s, job));
}

const count = (n: number) => n.toLocaleString('en');
const change = (k: string) => k.replace('->', ' → ');

/** The report's parts, as cards. */
function report(org: Organization, s: BacktestReport, job: Job): HTMLElement[] {
  const o = s.outcomes;
  const labelled = o.fraud + o.legit;
  const changes = Object.entries(s.changes);
  const days = s.per_day;
  const parts: (HTMLElement | null)[] = [
    h(
      'section',
      { class: 'card', id: 'backtest-rule', 'aria-label': 'What was tested' },
      h('p', {}, h('span', { class: `badge action-${s.rule.action}` }, s.rule.action), ' when ', h('code', { class: 'expression' }, s.rule.expression)),
      h(
        'p',
        { class: 'muted' },
        `${Date.parse(s.from) === 0 ? 'Everything scored' : `From ${utc(s.from)}`} to ${utc(s.to)}: ${count(s.scanned)} scored transactions, ${count(s.reported_fraud)} of them reported fraud. Outcomes as known when it ran, ${utc(job.finished_at ?? job.created_at)}.`,
      ),
    ),
    s.warnings.length
      ? h(
          'div',
          { class: 'warning', id: 'backtest-warnings' },
          h('strong', {}, 'Read these figures with care'),
          h('ul', {}, ...s.warnings.map((w) => h('li', {}, w))),
        )
      : null,
    h(
      'section',
      { class: 'card', id: 'backtest-figures', 'aria-labelledby': 'backtest-figures-title' },
      h('h2', { id: 'backtest-figures-title' }, 'What it would have matched'),
      h(
        'div',
        { class: 'figures' },
        figure(
          'backtest-matched',
          'Matched',
          count(s.matched),
          `of ${count(s.scanned)} scanned${s.scanned ? ` (${pct(s.matched / s.scanned)})` : ''}${s.errors ? `; ${count(s.errors)} could not be evaluated and count as not matched` : ''}`,
          s.matched,
        ),
        figure(
          'backtest-outcomes',
          'Outcomes of the matched',
          `${count(o.fraud)} fraud, ${count(o.legit)} legitimate`,
          `${count(o.unknown)} without an outcome yet`,
          o.fraud,
        ),
        figure(
          'backtest-precision',
          'Precision',
          s.precision === null ? '—' : pct(s.precision),
          s.precision === null ? 'no matched transaction has an outcome' : `${count(o.fraud)} fraud of the ${count(labelled)} matched with an outcome`,
          s.precision,
        ),
        figure(
          'backtest-recall',
          'Recall',
          s.recall === null ? '—' : pct(s.recall),
          s.recall === null ? 'no fraud was reported in the period' : `${count(o.fraud)} of the ${count(s.reported_fraud)} fraud reported in the period`,
          s.recall,
        ),
        figure('backtest-money', 'Amounts matched', money(s.fraud_amount), `in fraud; ${money(s.legit_amount)} in legitimate payments`, s.fraud_amount),
      ),
    ),
    h(
      'section',
      { class: 'card', id: 'backtest-changes', 'aria-labelledby': 'backtest-changes-title' },
      h('h2', { id: 'backtest-changes-title' }, 'Decisions it would have changed'),
      changes.length
        ? table(
            ['Decided then → would be', 'Transactions'],
            changes.map(([k, n]) => [change(k), count(n)]),
          )
        : h('p', { class: 'muted' }, 'None: every match was already decided as this rule would.'),
      h('p', { class: 'muted' }, 'Against the decisions logged, with the rules that were live then; an allow rule decides over block and review rules.'),
    ),
    h(
      'section',
      { class: 'card', id: 'backtest-days', 'aria-labelledby': 'backtest-days-title' },
      h('h2', { id: 'backtest-days-title' }, 'Per day (UTC)'),
      days.length === 0
        ? h('p', { class: 'muted' }, 'No day had a match.')
        : h(
            'div',
            {},
            h(
              'figure',
              { class: 'chart-card' },
              seriesChart(
                'Matches per day',
                `Transactions the rule matched each day, and of them the fraud and the legitimate ones; ${days.length} day${days.length > 1 ? 's' : ''} with a match.`,
                days.map((d) => d.day.slice(5)),
                [
                  { name: 'matched', values: days.map((d) => d.matched), kind: 'bar', cls: 's-volume' },
                  { name: 'fraud', values: days.map((d) => d.fraud), kind: 'bar', cls: 's-fraud' },
                  { name: 'legitimate', values: days.map((d) => d.legit), kind: 'bar', cls: 's-legit' },
                ],
                { top: niceTop(Math.max(...days.map((d) => d.matched), 1)), format: (v) => Math.round(v).toLocaleString('en'), yLabel: 'transactions' },
              ),
              h('figcaption', {}, 'Matches per day, with their outcomes as known now'),
            ),
            h(
              'details',
              {},
              h('summary', {}, 'The same numbers as a table'),
              table(
                ['Day', 'Matched', 'Fraud', 'Legitimate'],
                days.map((d) => [d.day, count(d.matched), count(d.fraud), count(d.legit)]),
              ),
            ),
          ),
    ),
    s.compare ? compareCard(s, s.compare) : null,
    examplesCard(org, s),
  ];
  return parts.filter((p): p is HTMLElement => p !== null);
}

/** One headline figure, with what it is made of underneath; `data-value` holds the exact number. */
function figure(id: string, label: string, value: string, detail: string, exact: number | null): HTMLElement {
  return h(
    'div',
    { id, 'data-value': exact === null ? '' : String(exact) },
    h('span', { class: 'muted' }, label),
    h('span', { class: 'figure-value' }, value),
    h('span', { class: 'muted' }, detail),
  );
}

/** The tested version beside the live one, figure by figure. */
function compareCard(s: BacktestReport, c: NonNullable<BacktestReport['compare']>): HTMLElement {
  const rows: [string, (r: VersionFigures) => string][] = [
    ['Expression', (r) => r.rule.expression],
    ['Action', (r) => r.rule.action],
    ['Matched', (r) => count(r.matched)],
    ['Fraud', (r) => count(r.outcomes.fraud)],
    ['Legitimate', (r) => count(r.outcomes.legit)],
    ['Without an outcome', (r) => count(r.outcomes.unknown)],
    ['Precision', (r) => (r.precision === null ? '—' : pct(r.precision))],
    ['Recall', (r) => (r.recall === null ? '—' : pct(r.recall))],
    ['Fraud amount', (r) => money(r.fraud_amount)],
    ['Legitimate amount', (r) => money(r.legit_amount)],
    ['Could not be evaluated', (r) => count(r.errors)],
  ];
  return h(
    'section',
    { class: 'card', id: 'backtest-compare', 'aria-labelledby': 'backtest-compare-title' },
    h('h2', { id: 'backtest-compare-title' }, `Beside the live version (${c.rule.version})`),
    table(
      ['Figure', `Version ${s.rule.version} (tested)`, `Version ${c.rule.version} (live)`],
      rows.map(([label, f]) => [label, f(s), f(c)]),
    ),
    c.warnings.length ? h('ul', { class: 'muted' }, ...c.warnings.map((w) => h('li', {}, `Live version: ${w}`))) : null,
  );
}

function examplesCard(org: Organization, s: BacktestReport): HTMLElement {
  const groups: [keyof BacktestReport['examples'], string][] = [
    ['fraud', 'Fraud'],
    ['legit', 'Legitimate'],
    ['unknown', 'Without an outcome'],
  ];
  const shown = groups.filter(([k]) => s.examples[k].length > 0);
  return h(
    'section',
    { class: 'card', id: 'backtest-examples', 'aria-labelledby': 'backtest-examples-title' },
    h('h2', { id: 'backtest-examples-title' }, 'Examples'),
    shown.length === 0
      ? h('p', { class: 'muted' }, 'Nothing matched.')
      : h('p', { class: 'muted' }, 'The first matches of each outcome, with the values the rule read as their decisions saw them.'),
    ...shown.map(([k, label]) =>
      h(
        'div',
        { id: `backtest-examples-${k}` },
        h('h3', {}, `${label} (${s.examples[k].length} shown)`),
        table(
          ['Transaction', 'Time', 'Amount', 'Decided', 'Would be', 'Values read'],
          s.examples[k].map((x) => [
            h('a', { href: transactionHref(org.id, x.transaction_id) }, x.transaction_id),
            utc(x.time),
            money(x.amount),
            h('span', { class: `decision-${x.decision}` }, x.decision),
            h('span', { class: `decision-${x.would_be}` }, x.would_be),
            h(
              'span',
              { class: 'values-read' },
              flatValues(x.values)
                .map(([n, v]) => `${n} = ${v}`)
                .join(', '),
            ),
          ]),
        ),
      ),
    ),
  );
}
