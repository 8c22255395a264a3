// Datasets: upload a CSV (drop it on the upload button, or press it to choose one), read what the
// check found in plain words, map the file's columns with the mapping editor (pre-filled with the
// service's suggestion, each header shown with a few of its values), preview it, queue scoring in a
// mode, watch the job (polled; the numbers come from the work itself), read the decisions and bands
// it gave, the metrics on a labelled file and a warning when they look unreliable, page through the
// rows, download them under the file's own name, delete the upload; a member imports an upload of
// the organization's into its history, with columns mapped onto the organization's own fields.
// Past uploads and their jobs are listed: the organization's for a member (from the service), else
// this browser's (their ids kept in localStorage, since a guest's uploads belong to whoever holds
// the id). The address names what is shown (`#/datasets?dataset=…`, `#/datasets?job=…`), so a
// result can be reloaded or linked.
//
// This file is the page's shell: the upload and the areas the other files fill in (the current
// upload's area, the past uploads), and what the address names when the page opens.

import { api, ApiError } from '../../api.ts';
import type { Dataset, DatasetValidation, PublicConfig } from '../../contract.ts';
import { h } from '../../dom.ts';
import type { Route } from '../../route.ts';
import { address } from './address.ts';
import { uploadOrganization, whoIsThis, type Context } from './context.ts';
import { showDataset } from './dataset.ts';
import { showHistory } from './history.ts';
import { showJob } from './job.ts';
import { showMapping } from './mapping.ts';
import { remember } from './remembered.ts';
import { plainError } from './words.ts';
import './datasets.css';

export async function datasetsPage(root: HTMLElement, route?: Route): Promise<void> {
  const picker = h('input', { type: 'file', id: 'dataset-file', accept: '.csv,text/csv', hidden: true, 'aria-label': 'CSV file' });
  // The drop zone is itself the button that opens the file picker: nothing interactive inside it.
  const drop = h(
    'button',
    { type: 'button', class: 'drop dataset-drop', id: 'drop' },
    h('strong', {}, 'Drop a CSV file here'),
    h('span', {}, 'or press to choose one'),
  );
  const limits = h('p', { class: 'muted', id: 'dataset-limits' });
  const work = h('section', { id: 'dataset-work', 'aria-live': 'polite', 'aria-label': 'Current upload' });
  const past = h(
    'section',
    { id: 'dataset-history', class: 'card', 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title' }, 'Past uploads'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  root.replaceChildren(
    h('h1', {}, 'Datasets'),
    h(
      'p',
      {},
      'Score a whole file of transactions at once. Each row is one transaction: we need its amount, who paid (the customer) and who was paid (the merchant). A transaction id, a time, a location, a payment type and a fraud label are used when the file has them; with a label you also see how well the model did on your file.',
    ),
    limits,
    drop,
    picker,
    work,
    past,
  );
  let context: Context = { org: undefined };
  const ready = whoIsThis()
    .then((c) => (context = c))
    .catch(() => context);
  const refreshHistory = () => void ready.then(() => showHistory(past, context));
  const showValid = (d: Dataset) => showDataset(work, d, refreshHistory, context);
  refreshHistory();
  api<PublicConfig>('/api/config')
    .then((c) => {
      const l = c.limits;
      limits.textContent = `Files up to ${l.max_upload_mb} MB and ${Number(l.max_dataset_rows).toLocaleString('en')} rows, comma-separated with a header line. Uploads are deleted after ${l.upload_retention_hours} hours.`;
    })
    .catch(() => limits.remove());

  const upload = async (file: File) => {
    work.replaceChildren(h('p', { class: 'muted' }, `Uploading ${file.name}…`));
    await ready;
    const org = context.org ? `&organization_id=${encodeURIComponent(context.org.id)}` : '';
    try {
      const d = await api<Dataset>(`/api/datasets/upload?filename=${encodeURIComponent(file.name)}${org}`, { method: 'POST', file });
      remember('datasets', d.id);
      address({ dataset: d.id });
      showDataset(work, d, refreshHistory, context);
    } catch (e) {
      // A file that cannot be scored as it is (422 validation_failed): kept, with what the check found.
      const kept = e instanceof ApiError ? (e.detail as { dataset_id?: string; validation?: DatasetValidation }) : {};
      if (kept.validation && kept.dataset_id) {
        remember('datasets', kept.dataset_id);
        address({ dataset: kept.dataset_id });
        await showMapping(work, kept.dataset_id, kept.validation, showValid, refreshHistory, { organization: context.org });
      } else work.replaceChildren(plainError(e));
    }
    refreshHistory();
  };
  picker.addEventListener('change', () => picker.files?.[0] && void upload(picker.files[0]));
  drop.addEventListener('click', () => picker.click());
  drop.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    drop.classList.add('over');
  });
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
      const d = await api<Dataset>(`/api/datasets/${encodeURIComponent(datasetId)}`);
      await ready;
      if (d.valid) showDataset(work, d, refreshHistory, context);
      else
        await showMapping(work, d.id, d.validation, showValid, refreshHistory, {
          organization: uploadOrganization(context, d.organization_id),
          fields: d.mapping.fields,
        });
    }
  } catch (e) {
    work.replaceChildren(plainError(e));
  }
}
