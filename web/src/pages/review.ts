// Review queue: the organization's transactions decided `review` whose outcome is not known yet,
// oldest first (GET …/transactions?decision=review&outcome=none&order=oldest), one at a time with
// what the analyst needs to judge it: the score, the reasons, its own fields, the channel scores
// and the evidence.
// Keyboard first: F marks it fraud, L legitimate (both with the source "analyst review"), N skips
// to the next; the buttons do the same. A marked transaction leaves the queue; a skipped one stays
// for next time. "Next case" leads into the cases' loop (case.ts): the analyst's next case, claimed
// and opened, worked with the same keys.

import { api } from '../api.ts';
import type { TransactionPage, TransactionRecord } from '../contract.ts';
import { errorBox, h } from '../dom.ts';
import { organizationFor, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import { loadRecord, markOutcome, recordParts } from './transactions.ts';
import { fieldDeclarations } from './record-fields.ts';
import { nextCaseButton } from './case.ts';

const PAGE = 25;

/** The queue as far as it has been read: its items, where the analyst is, and whether more wait. */
interface Queue {
  org: Organization;
  items: TransactionRecord[];
  at: number;
  hasMore: boolean;
}

/** The queue on screen: what its keys do. */
let active: { act: (key: 'fraud' | 'legit' | 'next') => void } | undefined;

// One listener for the page's keys, acting only while the queue is on screen and no field has focus.
document.addEventListener('keydown', (ev) => {
  if (!active || !location.hash.startsWith('#/review') || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const target = ev.target as HTMLElement | null;
  if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return;
  const key = ev.key.toLowerCase();
  const action = key === 'f' ? 'fraud' : key === 'l' ? 'legit' : key === 'n' ? 'next' : undefined;
  if (!action) return;
  ev.preventDefault();
  active.act(action);
});

export async function reviewPage(root: HTMLElement, route: Route): Promise<void> {
  active = undefined;
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'review', 'Review queue');
    if (!chosen) return;
    const queue: Queue = { org: chosen.org, items: [], at: 0, hasMore: true };
    await readMore(queue);
    const view = h('div', { id: 'review-item' });
    const caseStatus = h('div', { id: 'case-entry-status', role: 'status', 'aria-live': 'polite' });
    root.replaceChildren(
      h('h1', {}, 'Review queue'),
      h(
        'div',
        { class: 'actions' },
        chosen.picker,
        h('p', { class: 'muted' }, `${chosen.org.name}: transactions decided “review” with no outcome yet, oldest first. Keys: F fraud, L legitimate, N next.`),
      ),
      h(
        'div',
        { class: 'card', id: 'case-entry' },
        h(
          'p',
          {},
          'Cases group one customer’s (or merchant’s, or device’s) decisions in your inboxes: work them one after another with the keys, from your next case. ',
          h('a', { href: `#/cases?org=${encodeURIComponent(chosen.org.id)}` }, 'All cases'),
        ),
        h(
          'div',
          { class: 'actions' },
          nextCaseButton(chosen.org, (m) => caseStatus.replaceChildren(m)),
        ),
        caseStatus,
      ),
      view,
    );
    let busy = false;
    const act = async (what: 'fraud' | 'legit' | 'next') => {
      if (busy || queue.at >= queue.items.length) return;
      busy = true;
      try {
        const item = queue.items[queue.at]!;
        if (what === 'next') queue.at++;
        else {
          await markOutcome(queue.org, item.transaction_id, what, 'review');
          queue.items.splice(queue.at, 1);
        }
        if (queue.at >= queue.items.length && queue.hasMore) await readMore(queue);
        await show(view, queue, act, what === 'next' ? undefined : `${item.transaction_id} marked ${what === 'fraud' ? 'fraud' : 'legitimate'}.`);
      } catch (e) {
        view.prepend(errorBox(e));
      } finally {
        busy = false;
      }
    };
    active = { act: (k) => void act(k) };
    await show(view, queue, act);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Review queue'), errorBox(e));
  }
}

/** Reads the next page of the queue, after the last item read. */
async function readMore(queue: Queue): Promise<void> {
  const q = new URLSearchParams({ decision: 'review', outcome: 'none', order: 'oldest', limit: String(PAGE) });
  const last = queue.items.at(-1);
  if (last) q.set('starting_after', last.transaction_id);
  const page = await api<TransactionPage>(`/api/organizations/${encodeURIComponent(queue.org.id)}/transactions?${q}`);
  queue.items.push(...page.data);
  queue.hasMore = page.has_more;
}

async function show(view: HTMLElement, queue: Queue, act: (what: 'fraud' | 'legit' | 'next') => Promise<void>, done?: string): Promise<void> {
  const status = h('p', { id: 'review-status', role: 'status', 'aria-live': 'polite' }, done ?? '');
  const item = queue.items[queue.at];
  if (!item) {
    view.replaceChildren(
      status,
      h(
        'div',
        { class: 'card', id: 'queue-empty' },
        h(
          'p',
          {},
          queue.at > 0
            ? 'You have seen every transaction in the queue; the ones you skipped wait for next time.'
            : 'The queue is empty: no transaction decided “review” is waiting for an outcome.',
        ),
      ),
    );
    return;
  }
  const record = (await loadRecord(queue.org, item.transaction_id)) ?? item;
  const declared = await fieldDeclarations(queue.org, record);
  const button = (what: 'fraud' | 'legit' | 'next', text: string, key: string, cls: string) => {
    const b = h('button', { type: 'button', id: `review-${what}`, class: cls, 'aria-keyshortcuts': key }, text, ' ', h('kbd', {}, key));
    b.addEventListener('click', () => void act(what));
    return b;
  };
  const left = queue.items.length - queue.at;
  view.replaceChildren(
    status,
    h(
      'div',
      { class: 'card review-bar' },
      h('p', { id: 'review-position' }, `Transaction ${record.transaction_id} · ${left}${queue.hasMore ? '+' : ''} waiting`),
      h(
        'div',
        { class: 'actions' },
        button('fraud', 'Mark fraud', 'F', ''),
        button('legit', 'Mark legitimate', 'L', 'secondary'),
        button('next', 'Next', 'N', 'secondary'),
        h('a', { href: `#/transactions/${encodeURIComponent(record.transaction_id)}?org=${encodeURIComponent(queue.org.id)}` }, 'Open its page'),
      ),
    ),
    ...recordParts(queue.org, record, declared),
  );
}
