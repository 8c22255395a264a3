// A scoring job followed to its end: a progress bar and its stage, polled from the service (the
// numbers come from the work itself) while the job is on screen, then what it found (summary.ts)
// and its scored rows (results.ts). Opened right after queueing, or from the job's address or a
// link in the past uploads.

import { api, jobSummary } from '../../api.ts';
import type { Dataset, Job } from '../../contract.ts';
import { h, pct } from '../../dom.ts';
import { showPage } from './results.ts';
import { summaryCards } from './summary.ts';

/** A job opened from its address or the list: its upload's name if the upload is still there. */
export async function showJob(work: HTMLElement, id: string): Promise<void> {
  const job = await api<Job>(`/api/jobs/${encodeURIComponent(id)}`);
  const d = job.dataset_id ? await api<Dataset>(`/api/datasets/${encodeURIComponent(job.dataset_id)}`).catch(() => undefined) : undefined;
  const area = h('div', { id: 'job' });
  work.replaceChildren(area);
  await followJob(area, job, d?.original_name);
}

export async function followJob(area: HTMLElement, job: Job, fileName: string | undefined): Promise<void> {
  const progress = h('progress', { id: 'job-progress', max: '1', value: '0', 'aria-label': 'Job progress' });
  const stage = h('p', { id: 'job-stage', class: 'muted' }, 'queued');
  const card = h(
    'div',
    { class: 'card', id: 'job-card' },
    h('h2', {}, `Scoring ${fileName ?? 'a removed upload'} (${String(job.mode ?? 'balanced').replace('_', ' ')})`),
    progress,
    stage,
  );
  area.replaceChildren(card);
  card.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  let j = job;
  for (;;) {
    j = await api<Job>(`/api/jobs/${encodeURIComponent(job.id)}`);
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
  area.append(...summaryCards(jobSummary<'score'>(j)), rows);
  await showPage(rows, job.id, 1, fileName);
}
