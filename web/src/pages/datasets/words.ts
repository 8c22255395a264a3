// Plain words for the Datasets page: the service's errors without the parts meant for API callers
// (this page's visitors upload a file, they do not call endpoints), and counts with their nouns.

import { ApiError } from '../../api.ts';
import { errorBox, h } from '../../dom.ts';

/** An error in words: the service's message and fix without API paths, the reason code muted. */
export function plainError(e: unknown): HTMLElement {
  if (!(e instanceof ApiError)) return errorBox(e);
  const fix = withoutApi(e.fix);
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('strong', {}, withoutApi(e.message) || 'Something went wrong.'),
    fix ? h('p', {}, fix) : null,
    h('p', { class: 'muted reason-code' }, `Reason code: ${e.reason}`),
  );
}

/** Text without the sentences that name API endpoints (they are for API callers, not this page). */
const withoutApi = (text: string) =>
  text
    .split(/(?<=\.)\s+/)
    .filter((s) => !/\/api\/|\b(GET|POST|DELETE) /.test(s))
    .join(' ');

export const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
