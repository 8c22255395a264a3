// A finished job's scored rows, a page at a time (each row's score, band, decision and its top
// reason), with the download of them all, named after the uploaded file.

import { api } from '../../api.ts';
import type { JobResultPage } from '../../contract.ts';
import { h, pct, table } from '../../dom.ts';
import { plainError } from './words.ts';

const PAGE_SIZE = 25;

export async function showPage(results: HTMLElement, id: string, page: number, fileName: string | undefined): Promise<void> {
  try {
    const r = await api<JobResultPage>(`/api/jobs/${encodeURIComponent(id)}/result?page=${page}&page_size=${PAGE_SIZE}`);
    const prev = h('button', { type: 'button', class: 'secondary', id: 'prev-page', disabled: page <= 1 }, 'Previous');
    const next = h('button', { type: 'button', class: 'secondary', id: 'next-page', disabled: page >= r.total_pages }, 'Next');
    prev.addEventListener('click', () => void showPage(results, id, page - 1, fileName));
    next.addEventListener('click', () => void showPage(results, id, page + 1, fileName));
    // Named after the upload; without it, the service's Content-Disposition names it.
    const download = h(
      'a',
      {
        href: `/api/jobs/${encodeURIComponent(id)}/download`,
        download: fileName ? `${fileName.replace(/\.csv$/i, '')}.scored.csv` : true,
        id: 'download',
        class: 'button',
      },
      'Download CSV',
    );
    results.replaceChildren(
      h('h2', {}, 'Scored rows'),
      table(
        ['row', 'transaction', 'amount', 'score', 'band', 'decision', 'top reason'],
        r.rows.map((x) => [
          String(x.row),
          x.transaction_id ?? '',
          String(x.amount),
          pct(x.risk_score, 2),
          x.risk_band,
          x.decision,
          x.top_reasons?.[0]?.text ?? '—',
        ]),
      ),
      h(
        'div',
        { class: 'actions' },
        prev,
        h('span', { id: 'page-of' }, `Page ${page} of ${r.total_pages} (${r.total_rows.toLocaleString('en')} rows)`),
        next,
        download,
      ),
    );
  } catch (e) {
    results.replaceChildren(plainError(e));
  }
}
