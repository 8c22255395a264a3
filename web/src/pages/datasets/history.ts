// Past uploads: the organization's for a member (from the service), else this browser's (the ids
// remembered.ts keeps), newest first, each with its scoring jobs linking to their results. A job
// whose upload has expired or been deleted is still listed, so its results stay reachable.

import { api, ApiError } from '../../api.ts';
import type { Dataset, Job, JobList, OrganizationDatasets } from '../../contract.ts';
import { h, table, utc } from '../../dom.ts';
import type { Context } from './context.ts';
import { forget, mine } from './remembered.ts';
import { plainError } from './words.ts';

const jobLink = (j: Job) =>
  h(
    'a',
    { href: `#/datasets?job=${encodeURIComponent(j.id)}`, class: 'job-link' },
    `${String(j.mode ?? 'balanced').replace('_', ' ')} · ${j.status === 'succeeded' ? 'results' : j.status}`,
  );

/** The organization's uploads and jobs, or this browser's, newest first, each linking to its page. */
export async function showHistory(section: HTMLElement, context: Context): Promise<void> {
  const title = h('h2', { id: 'history-title' }, context.org ? `Past uploads of ${context.org.name}` : 'Past uploads in this browser');
  try {
    let datasets: Dataset[] = [];
    let jobs: Job[] = [];
    /** Uploads known only by id that have expired: their jobs are still listed. */
    const gone = new Set<string>();
    if (context.org) {
      const org = encodeURIComponent(context.org.id);
      [datasets, jobs] = await Promise.all([
        api<OrganizationDatasets>(`/api/organizations/${org}/datasets`).then((r) => r.datasets),
        api<JobList>(`/api/jobs?organization_id=${org}`).then((r) => r.jobs),
      ]);
      jobs = jobs.filter((j) => j.kind === 'score');
    } else {
      const kept = mine();
      const found = await Promise.all(
        kept.datasets.map((id) =>
          api<Dataset>(`/api/datasets/${encodeURIComponent(id)}`).catch((e) => {
            if (e instanceof ApiError && e.status === 410) gone.add(id);
            else if (e instanceof ApiError && e.status === 404) forget('datasets', id);
            return undefined;
          }),
        ),
      );
      datasets = found.filter((d): d is Dataset => d !== undefined);
      const foundJobs = await Promise.all(
        kept.jobs.map((id) =>
          api<Job>(`/api/jobs/${encodeURIComponent(id)}`).catch((e) => {
            if (e instanceof ApiError && e.status === 404) forget('jobs', id);
            return undefined;
          }),
        ),
      );
      jobs = foundJobs.filter((j): j is Job => j !== undefined);
    }
    const jobsOf = new Map<string | null, Job[]>();
    for (const j of jobs) jobsOf.set(j.dataset_id, [...(jobsOf.get(j.dataset_id) ?? []), j]);
    const rows: (string | Node)[][] = datasets.map((d) => [
      h('a', { href: `#/datasets?dataset=${encodeURIComponent(d.id)}` }, d.original_name),
      utc(d.created_at),
      Number(d.rows).toLocaleString('en'),
      d.valid ? 'ready' : 'needs its columns mapped',
      jobLinks(jobsOf.get(d.id)),
    ]);
    // A job's dataset_id is null only for an import of the example, never listed here.
    const known = new Set<string | null>(datasets.map((d) => d.id));
    for (const [id, js] of jobsOf)
      if (!known.has(id))
        rows.push([
          h('span', { class: 'muted' }, (id !== null && gone.has(id)) || context.org ? 'deleted or expired upload' : 'upload not found'),
          utc(js[0]!.created_at),
          '—',
          'file removed',
          jobLinks(js),
        ]);
    section.replaceChildren(
      title,
      rows.length ? table(['File', 'Uploaded', 'Rows', 'Status', 'Scoring jobs'], rows) : h('p', { class: 'muted' }, 'Nothing uploaded yet.'),
    );
  } catch (e) {
    section.replaceChildren(title, plainError(e));
  }
}

function jobLinks(js: Job[] | undefined): Node | string {
  if (!js?.length) return 'not scored yet';
  return h('span', { class: 'job-links' }, ...js.flatMap((j, i) => (i ? [', ', jobLink(j)] : [jobLink(j)])));
}
