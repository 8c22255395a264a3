// Datasets: upload a CSV (drop it on the upload button, or press it to choose one), read what the
// check found in plain words, map the file's columns with the mapping editor (pre-filled with the
// service's suggestion, each header shown with a few of its values), preview it, queue scoring in a
// mode, watch the job (polled; the numbers come from the work itself), read the decisions and bands
// it gave, the metrics on a labelled file and a warning when they look unreliable, page through the
// rows, download them under the file's own name, delete the upload. Past uploads and their jobs are
// listed: the organization's for a member (from the service), else this browser's (their ids kept
// in localStorage, since a guest's uploads belong to whoever holds the id). The address names what
// is shown (`#/datasets?dataset=…`, `#/datasets?job=…`), so a result can be reloaded or linked.

import { api, ApiError } from '../api.ts';
import { errorBox, h, num, pct, table, utc } from '../dom.ts';
import { driftNotice } from '../drift.ts';
import { REMEMBERED_ORGANIZATION, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import './datasets.css';

type Rec = Record<string, any>;

const COLUMNS = ['amount', 'customer_id', 'merchant_id', 'transaction_id', 'timestamp', 'location', 'payment_type', 'label'] as const;
const REQUIRED = new Set<string>(['amount', 'customer_id', 'merchant_id']);
/** What each column means, in words. */
const MEANING: Record<string, string> = {
  amount: 'Amount',
  customer_id: 'Customer (who pays)',
  merchant_id: 'Merchant (who is paid)',
  transaction_id: 'Transaction id',
  timestamp: 'Time',
  location: 'Location',
  payment_type: 'Payment type',
  label: 'Fraud label (1 fraud, 0 legitimate)',
};
const PAGE_SIZE = 25;
/** This browser's uploads and jobs (ids only, newest first), for a visitor without an organization. */
const MINE = 'datasets.mine';
const KEPT_IDS = 30;
/** Below this ROC AUC a labelled file's ranking is close to chance. */
const POOR_AUC = 0.6;

interface Context {
  /** The organization uploads and jobs belong to, for a signed-in member. */
  org: Organization | undefined;
}

export async function datasetsPage(root: HTMLElement, route?: Route): Promise<void> {
  const picker = h('input', { type: 'file', id: 'dataset-file', accept: '.csv,text/csv', hidden: true, 'aria-label': 'CSV file' });
  // The drop zone is itself the button that opens the file picker: nothing interactive inside it.
  const drop = h('button', { type: 'button', class: 'drop dataset-drop', id: 'drop' }, h('strong', {}, 'Drop a CSV file here'), h('span', {}, 'or press to choose one'));
  const limits = h('p', { class: 'muted', id: 'dataset-limits' });
  const work = h('section', { id: 'dataset-work', 'aria-live': 'polite', 'aria-label': 'Current upload' });
  const past = h('section', { id: 'dataset-history', class: 'card', 'aria-labelledby': 'history-title' }, h('h2', { id: 'history-title' }, 'Past uploads'), h('p', { class: 'muted' }, 'Loading…'));
  root.replaceChildren(
    h('h1', {}, 'Datasets'),
    h('p', {}, 'Score a whole file of transactions at once. Each row is one transaction: we need its amount, who paid (the customer) and who was paid (the merchant). A transaction id, a time, a location, a payment type and a fraud label are used when the file has them; with a label you also see how well the model did on your file.'),
    limits,
    drop,
    picker,
    work,
    past,
  );
  let context: Context = { org: undefined };
  const ready = whoIsThis().then((c) => (context = c)).catch(() => context);
  const refreshHistory = () => void ready.then(() => showHistory(past, context));
  refreshHistory();
  api('/api/config')
    .then((c) => {
      const l = c.limits as Rec;
      limits.textContent = `Files up to ${l.max_upload_mb} MB and ${Number(l.max_dataset_rows).toLocaleString('en')} rows, comma-separated with a header line. Uploads are deleted after ${l.upload_retention_hours} hours.`;
    })
    .catch(() => limits.remove());

  const upload = async (file: File) => {
    work.replaceChildren(h('p', { class: 'muted' }, `Uploading ${file.name}…`));
    await ready;
    const org = context.org ? `&organization_id=${encodeURIComponent(context.org.id)}` : '';
    try {
      const d = await api(`/api/datasets/upload?filename=${encodeURIComponent(file.name)}${org}`, { method: 'POST', file });
      remember('datasets', d.id);
      address({ dataset: d.id });
      showDataset(work, d, refreshHistory);
    } catch (e) {
      if (e instanceof ApiError && e.detail.validation && e.detail.dataset_id) {
        remember('datasets', e.detail.dataset_id);
        address({ dataset: e.detail.dataset_id });
        await showMapping(work, e.detail.dataset_id, e.detail.validation, refreshHistory);
      } else work.replaceChildren(plainError(e));
    }
    refreshHistory();
  };
  picker.addEventListener('change', () => picker.files?.[0] && void upload(picker.files[0]));
  drop.addEventListener('click', () => picker.click());
  drop.addEventListener('dragover', (ev) => (ev.preventDefault(), drop.classList.add('over')));
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    const file = ev.dataTransfer?.files[0];
    if (file) void upload(file);
  });

  // What the address names: a job's results, or an upload.
  const jobId = route?.query.get('job');
  const datasetId = route?.query.get('dataset');
  try {
    if (jobId) await showJob(work, jobId);
    else if (datasetId) {
      const d = await api(`/api/datasets/${encodeURIComponent(datasetId)}`);
      if (d.valid) showDataset(work, d, refreshHistory);
      else await showMapping(work, d.id, d.validation, refreshHistory);
    }
  } catch (e) {
    work.replaceChildren(plainError(e));
  }
}

/** The signed-in member's organization (the one chosen last in this tab, else the first), if any. */
async function whoIsThis(): Promise<Context> {
  const config = await api('/api/config');
  if (!config.auth_configured) return { org: undefined };
  const me = await api('/api/auth/me');
  if (!me.authenticated) return { org: undefined };
  const { organizations } = await api<{ organizations: Organization[] }>('/api/organizations');
  const wanted = sessionStorage.getItem(REMEMBERED_ORGANIZATION);
  return { org: organizations.find((o) => o.id === wanted) ?? organizations[0] };
}

/** Shows what is on screen in the address without a navigation (no hashchange, nothing redrawn). */
function address(q: { dataset?: string; job?: string }): void {
  const query = new URLSearchParams(q as Record<string, string>).toString();
  history.replaceState(null, '', `#/datasets${query ? `?${query}` : ''}`);
}

function mine(): { datasets: string[]; jobs: string[] } {
  try {
    const kept = JSON.parse(localStorage.getItem(MINE) ?? '{}');
    return { datasets: Array.isArray(kept.datasets) ? kept.datasets.filter((x: unknown) => typeof x === 'string') : [], jobs: Array.isArray(kept.jobs) ? kept.jobs.filter((x: unknown) => typeof x === 'string') : [] };
  } catch {
    return { datasets: [], jobs: [] };
  }
}

function remember(kind: 'datasets' | 'jobs', id: string): void {
  const kept = mine();
  kept[kind] = [id, ...kept[kind].filter((x) => x !== id)].slice(0, KEPT_IDS);
  localStorage.setItem(MINE, JSON.stringify(kept));
}

function forget(kind: 'datasets' | 'jobs', id: string): void {
  const kept = mine();
  kept[kind] = kept[kind].filter((x) => x !== id);
  localStorage.setItem(MINE, JSON.stringify(kept));
}

const jobLink = (j: Rec) => h('a', { href: `#/datasets?job=${encodeURIComponent(j.id)}`, class: 'job-link' }, `${String(j.mode ?? 'balanced').replace('_', ' ')} · ${j.status === 'succeeded' ? 'results' : j.status}`);

/** The organization's uploads and jobs, or this browser's, newest first, each linking to its page. */
async function showHistory(section: HTMLElement, context: Context): Promise<void> {
  const title = h('h2', { id: 'history-title' }, context.org ? `Past uploads of ${context.org.name}` : 'Past uploads in this browser');
  try {
    let datasets: Rec[] = [];
    let jobs: Rec[] = [];
    /** Uploads known only by id that have expired: their jobs are still listed. */
    const gone = new Set<string>();
    if (context.org) {
      const org = encodeURIComponent(context.org.id);
      [datasets, jobs] = await Promise.all([api(`/api/organizations/${org}/datasets`).then((r) => r.datasets as Rec[]), api(`/api/jobs?organization_id=${org}`).then((r) => r.jobs as Rec[])]);
      jobs = jobs.filter((j) => j.kind === 'score');
    } else {
      const kept = mine();
      const found = await Promise.all(
        kept.datasets.map((id) =>
          api(`/api/datasets/${encodeURIComponent(id)}`).catch((e) => {
            if (e instanceof ApiError && e.status === 410) gone.add(id);
            else if (e instanceof ApiError && e.status === 404) forget('datasets', id);
            return undefined;
          }),
        ),
      );
      datasets = found.filter((d): d is Rec => d !== undefined);
      const foundJobs = await Promise.all(kept.jobs.map((id) => api(`/api/jobs/${encodeURIComponent(id)}`).catch((e) => (e instanceof ApiError && e.status === 404 && forget('jobs', id), undefined))));
      jobs = foundJobs.filter((j): j is Rec => j !== undefined);
    }
    const jobsOf = new Map<string, Rec[]>();
    for (const j of jobs) jobsOf.set(j.dataset_id, [...(jobsOf.get(j.dataset_id) ?? []), j]);
    const rows: (string | Node)[][] = datasets.map((d) => [
      h('a', { href: `#/datasets?dataset=${encodeURIComponent(d.id)}` }, d.original_name),
      utc(d.created_at),
      Number(d.rows).toLocaleString('en'),
      d.valid ? 'ready' : 'needs its columns mapped',
      jobLinks(jobsOf.get(d.id)),
    ]);
    const known = new Set(datasets.map((d) => d.id));
    for (const [id, js] of jobsOf) if (!known.has(id)) rows.push([h('span', { class: 'muted' }, gone.has(id) || context.org ? 'deleted or expired upload' : 'upload not found'), utc(js[0]!.created_at), '—', 'file removed', jobLinks(js)]);
    section.replaceChildren(title, rows.length ? table(['File', 'Uploaded', 'Rows', 'Status', 'Scoring jobs'], rows) : h('p', { class: 'muted' }, 'Nothing uploaded yet.'));
  } catch (e) {
    section.replaceChildren(title, plainError(e));
  }
}

function jobLinks(js: Rec[] | undefined): Node | string {
  if (!js?.length) return 'not scored yet';
  return h('span', { class: 'job-links' }, ...js.flatMap((j, i) => (i ? [', ', jobLink(j)] : [jobLink(j)])));
}

/** An error in words: the service's message and fix without API paths, the reason code muted. */
function plainError(e: unknown): HTMLElement {
  if (!(e instanceof ApiError)) return errorBox(e);
  const fix = withoutApi(e.fix);
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, withoutApi(e.message) || 'Something went wrong.'), fix ? h('p', {}, fix) : null, h('p', { class: 'muted reason-code' }, `Reason code: ${e.reason}`));
}

/** Text without the sentences that name API endpoints (they are for API callers, not this page). */
const withoutApi = (text: string) =>
  text
    .split(/(?<=\.)\s+/)
    .filter((s) => !/\/api\/|\b(GET|POST|DELETE) /.test(s))
    .join(' ');

const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;

function problemsList(v: Rec): HTMLElement {
  return h(
    'ul',
    { class: 'problems' },
    ...(v.missing_required as string[]).map((c) => h('li', {}, `${MEANING[c]} is required: choose the column that holds it.`)),
    ...(v.problems as Rec[]).map((p) => h('li', {}, `Column “${p.header}” ${p.message} in ${plural(p.count, 'row')} (first: ${p.rows.join(', ')}${p.examples?.length ? `; e.g. ${p.examples.map((x: string) => `“${x}”`).join(', ')}` : ''}). ${p.fix}`)),
    ...(v.file_problems as Rec[]).map((p) => h('li', {}, `${p.message} ${p.fix}`)),
  );
}

/** The mapping editor: for each of our columns, the file's header that holds it (pre-filled with
 *  what is used now, else the suggestion) and a few of that header's values; then the file's own
 *  columns with their values and what each is used as. */
async function showMapping(work: HTMLElement, id: string, v: Rec, refreshHistory: () => void, current?: Rec): Promise<void> {
  let samples: Record<string, string[]> = {};
  try {
    samples = (await api(`/api/datasets/${encodeURIComponent(id)}/preview?rows=1`)).samples ?? {};
  } catch {
    // The editor works without the values.
  }
  const headers = v.columns_found as string[];
  const suggested = (v.suggested_mapping ?? {}) as Record<string, string>;
  const examples = (header: string) => (samples[header]?.length ? samples[header]!.join(', ') : '');
  const initial = (c: string) => (current?.[c] as string | undefined) ?? v.columns?.[c] ?? suggested[c] ?? '';
  const selects = new Map<string, HTMLSelectElement>();
  const seens = new Map<string, HTMLElement>();
  const rows = COLUMNS.map((c) => {
    const s = h('select', { id: `map-${c}`, name: c }, h('option', { value: '' }, REQUIRED.has(c) ? '— choose —' : '— not in my file —'), ...headers.map((hd) => h('option', { value: hd }, hd)));
    s.value = initial(c);
    selects.set(c, s);
    const seen = h('span', { class: 'map-samples muted', id: `samples-${c}` });
    seens.set(c, seen);
    const guessed = !v.columns?.[c] && suggested[c] !== undefined && s.value === suggested[c];
    return h(
      'div',
      { class: `map-row${REQUIRED.has(c) ? ' required' : ''}` },
      h('label', { for: `map-${c}` }, MEANING[c], REQUIRED.has(c) ? h('span', { class: 'muted' }, ' (required)') : null, h('code', { class: 'muted' }, c)),
      s,
      h('span', { class: 'map-note' }, seen, guessed ? h('span', { class: 'suggested' }, 'suggested') : null),
    );
  });
  const fileColumns = h('div', { id: 'file-columns' });
  const update = () => {
    for (const [c, s] of selects) seens.get(c)!.textContent = s.value ? `e.g. ${examples(s.value) || '(empty)'}` : '';
    const usedAs = new Map<string, string[]>();
    for (const [c, s] of selects) if (s.value) usedAs.set(s.value, [...(usedAs.get(s.value) ?? []), MEANING[c]!]);
    fileColumns.replaceChildren(table(['Column in your file', 'Values', 'Used as'], headers.map((hd) => [h('code', {}, hd), examples(hd) || '—', usedAs.get(hd)?.join(', ') ?? 'not used'])));
  };
  for (const s of selects.values()) s.addEventListener('change', update);
  const missing = (v.missing_required as string[]).map((c) => MEANING[c]!.replace(/ \(.*/, '').toLowerCase());
  const anySuggested = COLUMNS.some((c) => !v.columns?.[c] && suggested[c] !== undefined);
  const timeNote = !selects.get('timestamp')!.value
    ? headers.some((hd) => hd.trim().toLowerCase() === 'step')
      ? 'Time is left empty: “step” counts hours (as in PaySim), but numeric times are read as seconds, so using it would squeeze the file’s hours into seconds. Without a time, rows are taken in file order.'
      : 'Without a time, rows are taken in file order.'
    : null;
  const apply = h('button', { type: 'submit' }, 'Apply mapping');
  const form = h(
    'form',
    { class: 'card form', id: 'mapping', 'aria-labelledby': 'mapping-title' },
    h('h2', { id: 'mapping-title' }, 'Match your columns'),
    h('p', {}, current ? 'Choose which of your columns holds each thing, then check the file again.' : anySuggested ? 'We filled this in from your column names. Check each choice against the example values, then apply it.' : 'Choose which of your columns holds each thing, then apply it.'),
    h('div', { class: 'map-grid' }, ...rows),
    timeNote ? h('p', { class: 'muted', id: 'time-note' }, timeNote) : null,
    h('div', { class: 'actions' }, apply),
    h('h3', {}, 'Columns in your file'),
    fileColumns,
  );
  update();
  const intro = current
    ? null
    : h(
        'div',
        { class: 'card', id: 'what-to-fix' },
        h('h2', {}, 'This file needs a little help'),
        h('p', {}, missing.length ? `We could not tell which columns hold the ${missing.length > 1 ? `${missing.slice(0, -1).join(', the ')} and the ${missing.at(-1)}` : missing[0]}.` : 'Some values cannot be read as they are.'),
        problemsList(v),
        h('p', { class: 'muted reason-code' }, 'Reason code: validation_failed'),
      );
  work.replaceChildren(...(intro ? [intro] : []), form);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const mapping: Record<string, string> = {};
    for (const [c, s] of selects) if (s.value) mapping[c] = s.value;
    apply.disabled = true;
    try {
      showDataset(work, await api(`/api/datasets/${encodeURIComponent(id)}/validate`, { method: 'POST', body: { mapping } }), refreshHistory);
    } catch (err) {
      if (err instanceof ApiError && err.detail.validation) await showMapping(work, id, err.detail.validation, refreshHistory);
      else work.replaceChildren(plainError(err));
    }
    refreshHistory();
  });
}

function showDataset(work: HTMLElement, d: Rec, refreshHistory: () => void): void {
  const mode = h('select', { id: 'job-mode', 'aria-label': 'Mode' }, ...['balanced', 'high_precision', 'high_recall'].map((m) => h('option', { value: m }, m.replace('_', ' '))));
  const score = h('button', { type: 'button', id: 'score-dataset' }, 'Score this dataset');
  const edit = h('button', { type: 'button', class: 'secondary', id: 'edit-mapping' }, 'Change column mapping');
  const remove = h('button', { type: 'button', class: 'secondary', id: 'delete-dataset' }, 'Delete');
  const jobArea = h('div', { id: 'job' });
  const preview = h('div', {}, h('p', { class: 'muted' }, 'Loading the preview…'));
  const v = d.validation as Rec;
  const label = (v.suggested_mapping ?? {}).label as string | undefined;
  // A file whose required columns matched by name never saw the editor: point out a label it has.
  const labelHint = !d.has_labels && label ? h('p', { class: 'hint', id: 'label-hint' }, `Your column “${label}” looks like a fraud label. Map it as the label to see how well the model does on this file.`) : null;
  work.replaceChildren(
    h(
      'div',
      { class: 'card', id: 'dataset' },
      h('h2', {}, d.original_name),
      h('p', {}, `${Number(d.rows).toLocaleString('en')} rows · ${d.has_labels ? 'labelled' : 'no labels'} · valid · kept until ${String(d.expires_at).slice(0, 16).replace('T', ' ')} UTC`),
      labelHint,
      h('div', { class: 'actions' }, mode, score, edit, remove),
    ),
    h('div', { class: 'card' }, h('h2', {}, 'Preview'), preview),
    jobArea,
  );
  api(`/api/datasets/${d.id}/preview?rows=10`)
    .then((p) => preview.replaceChildren(table(['row', 'time', 'amount', 'customer', 'merchant', 'location', 'payment type', 'label'], (p.rows as Rec[]).map((r) => [String(r.row), r.time ?? '—', String(r.amount), r.customer_id, r.merchant_id, r.location, r.payment_type, r.label === null ? '—' : String(r.label)]))))
    .catch((e) => preview.replaceChildren(plainError(e)));
  edit.addEventListener('click', () => void showMapping(work, d.id, v, refreshHistory, { ...(v.columns ?? {}), ...(label && !d.has_labels ? { label } : {}) }));
  remove.addEventListener('click', async () => {
    try {
      await api(`/api/datasets/${d.id}`, { method: 'DELETE' });
      forget('datasets', d.id);
      address({});
      work.replaceChildren(h('p', { class: 'muted', id: 'deleted' }, `${d.original_name} was deleted.`));
    } catch (e) {
      work.replaceChildren(plainError(e));
    }
    refreshHistory();
  });
  score.addEventListener('click', async () => {
    score.disabled = true;
    try {
      const job = await api('/api/datasets/score', { method: 'POST', body: { dataset_id: d.id, mode: mode.value } });
      remember('jobs', job.id);
      address({ job: job.id });
      refreshHistory();
      await followJob(jobArea, job, d.original_name);
      refreshHistory();
    } catch (e) {
      jobArea.replaceChildren(plainError(e));
    } finally {
      score.disabled = false;
    }
  });
}

/** A job opened from its address or the list: its upload's name if the upload is still there. */
async function showJob(work: HTMLElement, id: string): Promise<void> {
  const job = await api(`/api/jobs/${encodeURIComponent(id)}`);
  const d = job.dataset_id ? await api(`/api/datasets/${encodeURIComponent(job.dataset_id)}`).catch(() => undefined) : undefined;
  const area = h('div', { id: 'job' });
  work.replaceChildren(area);
  await followJob(area, job, d?.original_name);
}

async function followJob(area: HTMLElement, job: Rec, fileName: string | undefined): Promise<void> {
  const progress = h('progress', { id: 'job-progress', max: '1', value: '0', 'aria-label': 'Job progress' });
  const stage = h('p', { id: 'job-stage', class: 'muted' }, 'queued');
  const card = h('div', { class: 'card', id: 'job-card' }, h('h2', {}, `Scoring ${fileName ?? 'a removed upload'} (${String(job.mode ?? 'balanced').replace('_', ' ')})`), progress, stage);
  area.replaceChildren(card);
  card.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  let j = job;
  for (;;) {
    j = await api(`/api/jobs/${encodeURIComponent(job.id)}`);
    progress.value = j.progress;
    stage.textContent = `${j.status} · ${j.stage} · ${pct(j.progress, 0)} · ${j.elapsed_seconds} s`;
    if (j.status === 'failed') {
      area.append(h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'The job failed.'), h('p', {}, j.error ?? '')));
      return;
    }
    if (j.status === 'succeeded') break;
    // Stop polling once the page shows something else.
    if (!area.isConnected) return;
    await new Promise((r) => setTimeout(r, 400));
  }
  const rows = h('div', { class: 'card', id: 'results' });
  area.append(...summaryCards(j.summary as Rec | null), rows);
  await showPage(rows, job.id, 1, fileName);
}

/** Decisions and bands with their shares, the metrics on a labelled file, and a warning in words
 *  when the scores look unreliable for this file. */
function summaryCards(s: Rec | null): HTMLElement[] {
  if (!s) return [];
  const total = Number(s.rows) || 0;
  const share = (n: number) => (total ? pct(n / total, 1) : '—');
  const counts = (names: string[], by: Rec) => table(names.map((x) => x), [names.map((x) => `${Number(by[x] ?? 0).toLocaleString('en')} (${share(Number(by[x] ?? 0))})`)]);
  const m = s.metrics as Rec | null;
  const why: string[] = [];
  if (m && m.roc_auc < POOR_AUC) why.push(`the model ranks your labelled fraud barely better than chance (ROC AUC ${num(m.roc_auc, 2)}, where 0.5 is a coin toss)`);
  const blocked = Number(s.decisions?.block ?? 0);
  if (total && blocked / total > 0.5) why.push(`most rows (${share(blocked)}) were blocked`);
  const warning = why.length
    ? h(
        'div',
        { class: 'warning', id: 'unreliable', role: 'status' },
        h('strong', {}, `These scores look unreliable for this file: ${why.join('; and ')}.`),
        h('p', {}, 'The model learned from card payments. Files from other kinds of systems (for example a simulation like PaySim, or account transfers) can look unusual to it. Use these scores with care, and check a sample by hand before acting on them.'),
      )
    : null;
  const drift = driftNotice(s.drift as Rec | null, 'this file');
  return [
    ...(drift && s.drift?.verdict !== 'ok' ? [drift] : []),
    ...(warning ? [warning] : []),
    h(
      'div',
      { class: 'card', id: 'job-summary' },
      h('h2', {}, `What the model decided on ${plural(total, 'row')}`),
      h('div', { class: 'summary-grid' }, h('div', { id: 'summary-decisions' }, h('h3', {}, 'Decisions'), counts(['approve', 'review', 'block'], s.decisions ?? {})), h('div', { id: 'summary-bands' }, h('h3', {}, 'Risk bands'), counts(['low', 'medium', 'high', 'critical'], s.bands ?? {}))),
      s.cold_start_rows ? h('p', { class: 'muted' }, `${plural(Number(s.cold_start_rows), 'row')} had too little earlier history in the file for their customer and merchant, and were scored by the cold-start rule.`) : null,
      s.drift?.verdict === 'ok' ? drift : null,
    ),
    ...(m
      ? [
          h(
            'div',
            { class: 'card', id: 'file-metrics' },
            h('h2', {}, 'How the model did on this file'),
            h('p', { class: 'muted' }, `${pct(m.fraud_rate, 2)} of the rows are labelled fraud.`),
            table(['ROC AUC', 'Average precision', 'Brier', 'Calibration error', 'Precision', 'Recall'], [[num(m.roc_auc), num(m.average_precision), num(m.brier, 4), num(m.expected_calibration_error, 4), num(m.precision), num(m.recall)]]),
          ),
        ]
      : []),
  ];
}

async function showPage(results: HTMLElement, id: string, page: number, fileName: string | undefined): Promise<void> {
  try {
    const r = await api(`/api/jobs/${encodeURIComponent(id)}/result?page=${page}&page_size=${PAGE_SIZE}`);
    const prev = h('button', { type: 'button', class: 'secondary', id: 'prev-page', disabled: page <= 1 }, 'Previous');
    const next = h('button', { type: 'button', class: 'secondary', id: 'next-page', disabled: page >= r.total_pages }, 'Next');
    prev.addEventListener('click', () => void showPage(results, id, page - 1, fileName));
    next.addEventListener('click', () => void showPage(results, id, page + 1, fileName));
    // Named after the upload; without it, the service's Content-Disposition names it.
    const download = h('a', { href: `/api/jobs/${encodeURIComponent(id)}/download`, download: fileName ? `${fileName.replace(/\.csv$/i, '')}.scored.csv` : true, id: 'download', class: 'button' }, 'Download CSV');
    results.replaceChildren(
      h('h2', {}, 'Scored rows'),
      table(['row', 'transaction', 'amount', 'score', 'band', 'decision', 'top reason'], (r.rows as Rec[]).map((x) => [String(x.row), x.transaction_id, String(x.amount), pct(x.risk_score, 2), x.risk_band, x.decision, x.top_reasons?.[0]?.text ?? '—'])),
      h('div', { class: 'actions' }, prev, h('span', { id: 'page-of' }, `Page ${page} of ${r.total_pages} (${r.total_rows.toLocaleString('en')} rows)`), next, download),
    );
  } catch (e) {
    results.replaceChildren(plainError(e));
  }
}
