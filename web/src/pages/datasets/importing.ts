// A history import of an organization's upload followed to its end, below the upload: a progress
// bar and its stage, polled from the service while the card is on screen (the numbers come from the
// work itself), then what it stored, with a link to the organization's transactions; or why it
// failed (the job's error names the row and the column to fix, never a refused value).

import { api, jobSummary } from '../../api.ts';
import type { Job } from '../../contract.ts';
import { h, pct, utc } from '../../dom.ts';
import { plural } from './words.ts';

export async function followImport(area: HTMLElement, job: Job, fileName: string, organization: { id: string; name: string }): Promise<void> {
  const progress = h('progress', { id: 'import-progress', max: '1', value: '0', 'aria-label': 'Import progress' });
  const stage = h('p', { id: 'import-stage', class: 'muted' }, 'queued');
  const card = h('div', { class: 'card', id: 'import-card' }, h('h2', {}, `Importing ${fileName} into ${organization.name}’s history`), progress, stage);
  area.replaceChildren(card);
  card.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  let j = job;
  for (;;) {
    j = await api<Job>(`/api/jobs/${encodeURIComponent(job.id)}`);
    progress.value = j.progress;
    stage.textContent = `${j.status} · ${j.stage} · ${pct(j.progress, 0)} · ${j.elapsed_seconds} s`;
    if (j.status === 'failed') {
      card.append(h('div', { class: 'error', role: 'alert', id: 'import-error' }, h('strong', {}, 'The import failed.'), h('p', {}, j.error ?? '')));
      return;
    }
    if (j.status === 'succeeded') break;
    if (!area.isConnected) return;
    await new Promise((r) => setTimeout(r, 400));
  }
  const s = jobSummary<'history_import'>(j)!;
  card.append(
    h(
      'p',
      { id: 'import-summary' },
      `Imported ${plural(s.imported, 'row')} (${s.labelled.toLocaleString('en')} labelled, ${s.fraud.toLocaleString('en')} fraud)${s.first_time && s.last_time ? `, from ${utc(s.first_time)} to ${utc(s.last_time)}` : ''}.`,
      s.skipped_existing ? ` ${plural(s.skipped_existing, 'row')} skipped: ${organization.name} has their transaction ids already.` : '',
    ),
    h('p', {}, h('a', { href: `#/transactions?org=${encodeURIComponent(organization.id)}`, id: 'imported-link' }, `See ${organization.name}’s transactions`)),
  );
}
