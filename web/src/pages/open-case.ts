// "Open case" on a transaction's page: a member who has a reason to look at a transaction whatever
// its decision was (a chargeback dispute, a customer's call) opens a case on it with that reason
// (`POST /api/organizations/{id}/cases`). The service opens the case a decision of the transaction
// would open, or adds the transaction to the entity's case already open there (201 or 200); the
// status line says which and links to the case, and says the service's refusal (no inbox yet) with
// its fix.

import { apiAnswer } from '../api.ts';
import type { Case } from '../contract.ts';
import { errorBox, h } from '../dom.ts';
import { caseHref } from '../links.ts';
import type { Organization } from '../org.ts';
import './cases.css';

/** The transaction's entity as a case groups it: "customer C-1", "device_hash d-9". */
const entityOf = (c: Case) => `${c.entity.kind === 'key' ? c.entity.field : c.entity.kind} ${c.entity.id}`;

/** The card with the reason and the button. */
export function openCaseCard(org: Organization, transactionId: string): HTMLElement {
  const reason = h('input', {
    id: 'open-case-reason',
    name: 'reason',
    required: true,
    maxlength: '500',
    autocomplete: 'off',
    placeholder: 'e.g. chargeback dispute 4471',
  });
  const submit = h('button', { type: 'submit', id: 'open-case' }, 'Open case');
  const status = h('div', { id: 'open-case-status', role: 'status', 'aria-live': 'polite', tabindex: '-1' });
  const say = (...m: (string | Node)[]) => {
    status.replaceChildren(...m);
    status.focus();
  };
  const form = h(
    'form',
    { class: 'form', id: 'open-case-form', 'aria-label': 'Open a case on this transaction' },
    h('label', { class: 'field' }, h('span', {}, 'Reason (kept on the case’s timeline)'), reason),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    try {
      const { status: code, body: c } = await apiAnswer<Case>(`/api/organizations/${encodeURIComponent(org.id)}/cases`, {
        method: 'POST',
        body: { transaction_id: transactionId, reason: reason.value },
      });
      reason.value = '';
      const link = h('a', { href: caseHref(org.id, c.id), id: 'opened-case' }, `the case of ${entityOf(c)}`);
      if (code === 201) say('Opened ', link, '.');
      else say('In ', link, `, which was open already: ${c.decision_count} ${c.decision_count === 1 ? 'decision' : 'decisions'}.`);
    } catch (e) {
      say(errorBox(e));
    } finally {
      submit.disabled = false;
    }
  });
  return h(
    'section',
    { class: 'card', id: 'open-case-card', 'aria-labelledby': 'open-case-title' },
    h('h2', { id: 'open-case-title' }, 'Case'),
    h(
      'p',
      { class: 'muted' },
      'Worth a person’s look whatever its decision was? Open a case on it: it goes to the inbox its decision routes to, into the open case of its customer (or whoever that inbox groups by) when there is one.',
    ),
    form,
    status,
  );
}
