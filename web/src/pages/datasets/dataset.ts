// One valid upload: its name, size, whether it is labelled and how long it is kept, a hint when a
// column looks like a fraud label that is not mapped as one, a preview of its first rows, and the
// actions on it: score it in a mode (the job is then followed below, job.ts), change its column
// mapping (mapping.ts), delete it.

import { api } from '../../api.ts';
import type { Dataset, Job, Preview } from '../../contract.ts';
import { h, table } from '../../dom.ts';
import { address } from './address.ts';
import { followJob } from './job.ts';
import { showMapping } from './mapping.ts';
import { forget, remember } from './remembered.ts';
import { plainError } from './words.ts';

export function showDataset(work: HTMLElement, d: Dataset, refreshHistory: () => void): void {
  const mode = h(
    'select',
    { id: 'job-mode', 'aria-label': 'Mode' },
    ...['balanced', 'high_precision', 'high_recall'].map((m) => h('option', { value: m }, m.replace('_', ' '))),
  );
  const score = h('button', { type: 'button', id: 'score-dataset' }, 'Score this dataset');
  const edit = h('button', { type: 'button', class: 'secondary', id: 'edit-mapping' }, 'Change column mapping');
  const remove = h('button', { type: 'button', class: 'secondary', id: 'delete-dataset' }, 'Delete');
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
      h('div', { class: 'actions' }, mode, score, edit, remove),
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
      void showMapping(work, d.id, v, (valid) => showDataset(work, valid, refreshHistory), refreshHistory, {
        ...(v.columns ?? {}),
        ...(label && !d.has_labels ? { label } : {}),
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
