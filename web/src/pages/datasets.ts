// Datasets: upload a CSV (drag and drop or a file picker), read its validation, fix missing columns
// with the column-mapping editor, preview it, queue scoring in a mode, watch the job's progress and
// stage (polled; the numbers come from the work itself), page through the results, read the
// metrics on a labelled file, download the scored CSV, delete the upload.

import { api, ApiError } from '../api.ts';
import { errorBox, h, num, pct, table } from '../dom.ts';

type Rec = Record<string, any>;

const COLUMNS = ['amount', 'customer_id', 'merchant_id', 'transaction_id', 'timestamp', 'location', 'payment_type', 'label'];
const REQUIRED = new Set(['amount', 'customer_id', 'merchant_id']);
const PAGE_SIZE = 25;

export function datasetsPage(root: HTMLElement): void {
  const picker = h('input', { type: 'file', id: 'dataset-file', accept: '.csv,text/csv' });
  const drop = h('div', { class: 'drop', id: 'drop', tabindex: '0', role: 'button', 'aria-label': 'Drop a CSV file here, or press Enter to choose one' }, h('strong', {}, 'Drop a CSV file here'), h('span', { class: 'muted' }, ' or '), h('label', { for: 'dataset-file', class: 'link' }, 'choose a file'), picker);
  const work = h('section', { id: 'dataset-work', 'aria-live': 'polite' });
  root.replaceChildren(
    h('h2', {}, 'Datasets'),
    h('p', { class: 'muted' }, 'Columns: amount, customer_id and merchant_id are required; transaction_id, timestamp, location, payment_type and label are optional. Files are kept for a limited time (see GET /api/config).'),
    drop,
    work,
  );
  const upload = async (file: File) => {
    work.replaceChildren(h('p', { class: 'muted' }, `Uploading ${file.name}…`));
    try {
      showDataset(work, await api(`/api/datasets/upload?filename=${encodeURIComponent(file.name)}`, { method: 'POST', file }));
    } catch (e) {
      if (e instanceof ApiError && e.detail.validation && e.detail.dataset_id) showMapping(work, e.detail.dataset_id, e.detail.validation, e);
      else work.replaceChildren(errorBox(e));
    }
  };
  picker.addEventListener('change', () => picker.files?.[0] && void upload(picker.files[0]));
  drop.addEventListener('keydown', (ev) => (ev.key === 'Enter' || ev.key === ' ') && (ev.preventDefault(), picker.click()));
  drop.addEventListener('dragover', (ev) => (ev.preventDefault(), drop.classList.add('over')));
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    const file = ev.dataTransfer?.files[0];
    if (file) void upload(file);
  });
}

function problemsList(v: Rec): HTMLElement {
  return h(
    'ul',
    { class: 'problems' },
    ...(v.missing_required as string[]).map((c) => h('li', {}, `Missing required column ${c}.`)),
    ...(v.problems as Rec[]).map((p) => h('li', {}, `${p.header}: ${p.message} in ${p.count} row(s), first ${p.rows.join(', ')}. ${p.fix}`)),
    ...(v.file_problems as Rec[]).map((p) => h('li', {}, `${p.message} ${p.fix}`)),
  );
}

/** The mapping editor: one select per column, listing the file's headers. */
function showMapping(work: HTMLElement, id: string, v: Rec, e: ApiError): void {
  const headers = v.columns_found as string[];
  const selects = COLUMNS.map((c) => {
    const s = h('select', { id: `map-${c}`, name: c }, h('option', { value: '' }, REQUIRED.has(c) ? '— choose —' : '— none —'), ...headers.map((hd) => h('option', { value: hd }, hd)));
    s.value = v.columns[c] ?? '';
    return h('label', { class: 'field' }, h('span', {}, `${c}${REQUIRED.has(c) ? ' (required)' : ''}`), s);
  });
  const apply = h('button', { type: 'submit' }, 'Apply mapping');
  const form = h('form', { class: 'card form', id: 'mapping', 'aria-label': 'Column mapping' }, h('h3', {}, 'Map your columns'), h('p', { class: 'muted' }, 'Pick which of your headers holds each column, then check the file again.'), h('div', { class: 'grid' }, ...selects), apply);
  work.replaceChildren(errorBox(e), h('div', { class: 'card' }, h('h3', {}, 'What to fix'), problemsList(v)), form);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const mapping: Record<string, string> = {};
    for (const c of COLUMNS) {
      const value = (form.querySelector(`#map-${c}`) as HTMLSelectElement).value;
      if (value) mapping[c] = value;
    }
    try {
      showDataset(work, await api(`/api/datasets/${id}/validate`, { method: 'POST', body: { mapping } }));
    } catch (err) {
      if (err instanceof ApiError && err.detail.validation) showMapping(work, id, err.detail.validation, err);
      else work.replaceChildren(errorBox(err));
    }
  });
}

async function showDataset(work: HTMLElement, d: Rec): Promise<void> {
  const mode = h('select', { id: 'job-mode', 'aria-label': 'Mode' }, ...['balanced', 'high_precision', 'high_recall'].map((m) => h('option', { value: m }, m.replace('_', ' '))));
  const score = h('button', { type: 'button', id: 'score-dataset' }, 'Score this dataset');
  const remove = h('button', { type: 'button', class: 'secondary', id: 'delete-dataset' }, 'Delete');
  const jobArea = h('div', { id: 'job' });
  const preview = h('div', {}, h('p', { class: 'muted' }, 'Loading the preview…'));
  work.replaceChildren(
    h('div', { class: 'card', id: 'dataset' }, h('h3', {}, d.original_name), h('p', {}, `${d.rows.toLocaleString('en')} rows · ${d.has_labels ? 'labelled' : 'no labels'} · valid · kept until ${String(d.expires_at).slice(0, 16).replace('T', ' ')} UTC`), h('div', { class: 'actions' }, mode, score, remove)),
    h('div', { class: 'card' }, h('h3', {}, 'Preview'), preview),
    jobArea,
  );
  api(`/api/datasets/${d.id}/preview?rows=10`)
    .then((p) => preview.replaceChildren(table(['row', 'time', 'amount', 'customer', 'merchant', 'location', 'payment type', 'label'], (p.rows as Rec[]).map((r) => [String(r.row), r.time ?? '—', String(r.amount), r.customer_id, r.merchant_id, r.location, r.payment_type, r.label === null ? '—' : String(r.label)]))))
    .catch((e) => preview.replaceChildren(errorBox(e)));
  remove.addEventListener('click', async () => {
    try {
      await api(`/api/datasets/${d.id}`, { method: 'DELETE' });
      work.replaceChildren(h('p', { class: 'muted', id: 'deleted' }, `${d.original_name} was deleted.`));
    } catch (e) {
      work.replaceChildren(errorBox(e));
    }
  });
  score.addEventListener('click', async () => {
    score.disabled = true;
    try {
      const job = await api('/api/datasets/score', { method: 'POST', body: { dataset_id: d.id, mode: mode.value } });
      await followJob(jobArea, job.id);
    } catch (e) {
      jobArea.replaceChildren(errorBox(e));
    } finally {
      score.disabled = false;
    }
  });
}

async function followJob(area: HTMLElement, id: string): Promise<void> {
  const progress = h('progress', { id: 'job-progress', max: '1', value: '0', 'aria-label': 'Job progress' });
  const stage = h('p', { id: 'job-stage', class: 'muted' }, 'queued');
  area.replaceChildren(h('div', { class: 'card' }, h('h3', {}, `Job ${id}`), progress, stage));
  for (;;) {
    const j = await api(`/api/jobs/${id}`);
    progress.value = j.progress;
    stage.textContent = `${j.status} · ${j.stage} · ${pct(j.progress, 0)} · ${j.elapsed_seconds} s`;
    if (j.status === 'failed') {
      area.append(h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'The job failed.'), h('p', {}, j.error ?? '')));
      return;
    }
    if (j.status === 'succeeded') break;
    await new Promise((r) => setTimeout(r, 400));
  }
  const results = h('div', { id: 'results' });
  area.append(results);
  await showPage(results, id, 1);
}

async function showPage(results: HTMLElement, id: string, page: number): Promise<void> {
  try {
    const r = await api(`/api/jobs/${id}/result?page=${page}&page_size=${PAGE_SIZE}`);
    const prev = h('button', { type: 'button', class: 'secondary', id: 'prev-page', disabled: page <= 1 }, 'Previous');
    const next = h('button', { type: 'button', class: 'secondary', id: 'next-page', disabled: page >= r.total_pages }, 'Next');
    prev.addEventListener('click', () => void showPage(results, id, page - 1));
    next.addEventListener('click', () => void showPage(results, id, page + 1));
    const m = r.metrics as Rec | null;
    results.replaceChildren(
      ...(m ? [h('div', { class: 'card', id: 'file-metrics' }, h('h3', {}, 'How the model did on this file'), table(['ROC AUC', 'Average precision', 'Brier', 'Calibration error', 'Precision', 'Recall'], [[num(m.roc_auc), num(m.average_precision), num(m.brier, 4), num(m.expected_calibration_error, 4), num(m.precision), num(m.recall)]]))] : []),
      h(
        'div',
        { class: 'card' },
        h('h3', {}, 'Scored rows'),
        table(['row', 'transaction', 'amount', 'score', 'band', 'decision', 'top reason'], (r.rows as Rec[]).map((x) => [String(x.row), x.transaction_id, String(x.amount), pct(x.risk_score, 2), x.risk_band, x.decision, x.top_reasons?.[0]?.text ?? '—'])),
        h('div', { class: 'actions' }, prev, h('span', { id: 'page-of' }, `Page ${page} of ${r.total_pages} (${r.total_rows.toLocaleString('en')} rows)`), next, h('a', { href: `/api/jobs/${id}/download`, download: `${id}.csv`, id: 'download', class: 'button' }, 'Download CSV')),
      ),
    );
  } catch (e) {
    results.replaceChildren(errorBox(e));
  }
}
