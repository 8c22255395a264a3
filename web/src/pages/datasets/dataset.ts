// One valid upload: its name, size, whether it is labelled and how long it is kept, a hint when a
// column looks like a fraud label that is not mapped as one, the organization's fields its columns
// are mapped onto, a preview of its first rows, and the actions on it: score it in a mode (the job
// is then followed below, job.ts), import it into the organization's history when it is an
// organization's upload with times (importing.ts), change its column mapping (mapping.ts), delete it.

import { api } from '../../api.ts';
import type { Dataset, Job, Preview } from '../../contract.ts';
import { h, table } from '../../dom.ts';
import { address } from './address.ts';
import { uploadOrganization, type Context } from './context.ts';
import { followImport } from './importing.ts';
import { followJob } from './job.ts';
import { showMapping } from './mapping.ts';
import { forget, remember } from './remembered.ts';
import { plainError } from './words.ts';

export function showDataset(work: HTMLElement, d: Dataset, refreshHistory: () => void, context: Context = { org: undefined }): void {
  const organization = uploadOrganization(context, d.organization_id);
  const mode = h(
    'select',
    { id: 'job-mode', 'aria-label': 'Mode' },
    ...['balanced', 'high_precision', 'high_recall'].map((m) => h('option', { value: m }, m.replace('_', ' '))),
  );
  const score = h('button', { type: 'button', id: 'score-dataset' }, 'Score this dataset');
  const edit = h('button', { type: 'button', class: 'secondary', id: 'edit-mapping' }, 'Change column mapping');
  const remove = h('button', { type: 'button', class: 'secondary', id: 'delete-dataset' }, 'Delete');
  // An organization's upload with times can go into its history (a file without times cannot be
  // placed in a timeline).
  const importing =
    organization && d.validation.columns.timestamp
      ? h('button', { type: 'button', class: 'secondary', id: 'import-history' }, `Import into ${organization.name}’s history`)
      : null;
  const mappedFields = Object.entries(d.mapping.fields ?? {});
  const jobArea = h('div', { id: 'job' });
  const preview = h('div', {}, h('p', { class: 'muted' }, 'Loading the preview…'));
  const v = d.validation;
  const label = v.suggested_mapping?.label;
  // A file whose required columns matched by name never saw the editor: point out a label it has.
  const labelHint =
    !d.has_labels && label
      ? h(
          'p',
          { class: 'hint', id: 'label-hint' },
          `Your column “${label}” looks like a fraud label. Map it as the label to see how well the model does on this file.`,
        )
      : null;
  work.replaceChildren(
    h(
      'div',
      { class: 'card', id: 'dataset' },
      h('h2', {}, d.original_name),
      h(
        'p',
        {},
        `${Number(d.rows).toLocaleString('en')} rows · ${d.has_labels ? 'labelled' : 'no labels'} · valid · kept until ${String(d.expires_at).slice(0, 16).replace('T', ' ')} UTC`,
      ),
      labelHint,
      mappedFields.length
        ? h(
            'p',
            { id: 'mapped-fields' },
            `Your fields: ${mappedFields.map(([name, header]) => `${name} from “${header}”`).join(', ')}. An import into the history keeps them with each row; scoring checks them and does not use them.`,
          )
        : null,
      h('div', { class: 'actions' }, mode, score, importing, edit, remove),
    ),
    h('div', { class: 'card' }, h('h2', {}, 'Preview'), preview),
    jobArea,
  );
  api<Preview>(`/api/datasets/${d.id}/preview?rows=10`)
    .then((p) =>
      preview.replaceChildren(
        table(
          ['row', 'time', 'amount', 'customer', 'merchant', 'location', 'payment type', 'label'],
          p.rows.map((r) => [
            String(r.row),
            r.time ?? '—',
            String(r.amount),
            r.customer_id,
            r.merchant_id,
            r.location,
            r.payment_type,
            r.label === null ? '—' : String(r.label),
          ]),
        ),
      ),
    )
    .catch((e) => preview.replaceChildren(plainError(e)));
  edit.addEventListener(
    'click',
    () =>
      void showMapping(work, d.id, v, (valid) => showDataset(work, valid, refreshHistory, context), refreshHistory, {
        current: {
          ...(v.columns ?? {}),
          ...(label && !d.has_labels ? { label } : {}),
        },
        organization,
        fields: d.mapping.fields,
      }),
  );
  remove.addEventListener('click', async () => {
    try {
      await api<null>(`/api/datasets/${d.id}`, { method: 'DELETE' });
      forget('datasets', d.id);
      address({});
      work.replaceChildren(h('p', { class: 'muted', id: 'deleted' }, `${d.original_name} was deleted.`));
    } catch (e) {
      work.replaceChildren(plainError(e));
    }
    refreshHistory();
  });
  importing?.addEventListener('click', async () => {
    importing.disabled = true;
    try {
      const job = await api<Job>(`/api/organizations/${encodeURIComponent(organization!.id)}/history-imports`, {
        method: 'POST',
        body: { dataset_id: d.id },
      });
      await followImport(jobArea, job, d.original_name, organization!);
    } catch (e) {
      jobArea.replaceChildren(plainError(e));
    } finally {
      importing.disabled = false;
    }
  });
  score.addEventListener('click', async () => {
    score.disabled = true;
    try {
      const job = await api<Job>('/api/datasets/score', { method: 'POST', body: { dataset_id: d.id, mode: mode.value } });
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
