// The rule editor, for a new rule and for a saved one: name, action, description and the CEL
// expression, checked as it is typed (POST …/rules/check, a moment after the last key, so a
// sentence being typed is not checked letter by letter, and a reply that arrives after a newer one
// is dropped). Each problem is shown with its line and column, a copy of its line with a caret
// under the column, and a button that puts the cursor there. A transaction id typed beside it
// evaluates the expression on what that transaction's decision saw and shows the values it read.
// Saving creates the rule, or saves a new version (put live at once for an active or shadow rule,
// or kept as a draft beside the live version); Backtest tests the saved version, or the text as it
// is when it differs. Everything works from the keyboard: the fields and buttons in order, the
// problem buttons, and Ctrl+Enter in the expression to save. The summary of the check is a polite
// live region, so a screen reader hears "No problems" or the first problem when typing pauses. The
// reference under the form lists what an expression reads: the built-in fields, the organization's
// own (`fields.<name>`, read from its fields API, or where an owner declares them) and the functions.

import { api, ApiError } from '../../api.ts';
import type { CheckResult, FieldList, Rule, RuleVersion } from '../../contract.ts';
import { errorBox, h, table } from '../../dom.ts';
import { fieldsHref, transactionHref } from '../../links.ts';
import type { Organization } from '../../org.ts';
import { FIELD_CEL_TYPES, RULE_FUNCTIONS } from './fields.ts';
import { RULE_FIELDS } from '../../../../src/domain/rules/fields.ts';
import { flatValues, queueBacktest, type Period } from './backtest.ts';

/** A problem the check found, at its line and column. */
export type Problem = CheckResult['errors'][number];
/** What the editor sends when it saves: the fields changed (all of them for a new rule). */
type RuleChanges = Partial<Record<'name' | 'expression' | 'action' | 'status' | 'description', string | null>>;

/** How long typing must pause before the expression is checked. */
const CHECK_AFTER_MS = 350;

export const ACTION_WORDS: Record<string, { label: string; does: string }> = {
  block: { label: 'Block: decline the payment', does: 'block it' },
  review: { label: 'Review: send it to an analyst', does: 'send it to review' },
  allow: { label: 'Allow: approve it, whatever the model says', does: 'approve it' },
};

const STATUS_CHOICES: [string, string][] = [
  ['draft', 'Draft: saved, not run'],
  ['shadow', 'Shadow: run and recorded, never decides'],
  ['active', 'Active: decides'],
];

/** The character offset of a 1-based line and column in `text`. */
function offsetOf(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  let at = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length - 1); i++) at += lines[i]!.length + 1;
  return Math.min(text.length, at + Math.max(0, column - 1));
}

/** A time typed in a datetime-local field (seconds optional), as the API's ISO UTC. */
export const utcInput = (v: string) => (v ? `${v.length === 16 ? `${v}:00` : v}Z` : undefined);

export function ruleEditor(
  org: Organization,
  rule: Rule | undefined,
  onSaved: (saved: Rule, message: string, button: string) => void,
): { form: HTMLFormElement; period: () => Period; load: (v: RuleVersion) => void } {
  const base = `/api/organizations/${encodeURIComponent(org.id)}/rules`;
  const live = rule !== undefined && (rule.status === 'active' || rule.status === 'shadow');
  const name = h('input', { id: 'rule-name', name: 'name', required: true, maxlength: '100', autocomplete: 'off', value: rule?.name });
  const action = h(
    'select',
    { id: 'rule-action', name: 'action' },
    ...Object.entries(ACTION_WORDS).map(([v, w]) => h('option', { value: v, selected: (rule?.action ?? 'block') === v }, w.label)),
  );
  const status = rule ? null : h('select', { id: 'rule-status', name: 'status' }, ...STATUS_CHOICES.map(([v, text]) => h('option', { value: v }, text)));
  const description = h('input', {
    id: 'rule-description',
    name: 'description',
    maxlength: '1000',
    autocomplete: 'off',
    value: rule?.description ?? undefined,
  });
  const expression = h('textarea', {
    id: 'rule-expression',
    name: 'expression',
    rows: '5',
    required: true,
    spellcheck: 'false',
    autocapitalize: 'off',
    autocomplete: 'off',
    'aria-describedby': 'rule-check-summary rule-expression-hint',
    'aria-keyshortcuts': 'Control+Enter',
  });
  expression.value = rule?.expression ?? '';
  const transaction = h('input', {
    id: 'rule-transaction',
    name: 'transaction_id',
    autocomplete: 'off',
    placeholder: 'a transaction id, exactly as sent',
    'aria-describedby': 'rule-transaction-hint',
  });
  const summary = h('p', { id: 'rule-check-summary', class: 'check-summary pending', role: 'status', 'aria-live': 'polite' });
  const problems = h('ul', { id: 'rule-problems', class: 'problems-list', 'aria-label': 'Problems' });
  const evaluation = h('div', { id: 'rule-evaluation', class: 'evaluation', role: 'status', 'aria-live': 'polite' });
  const from = h('input', { type: 'datetime-local', id: 'backtest-from', name: 'from', step: '1' });
  const to = h('input', { type: 'datetime-local', id: 'backtest-to', name: 'to', step: '1' });
  const saveStatus = h('div', { id: 'rule-save-status', class: 'notice', role: 'status', 'aria-live': 'polite' });
  const save = h('button', { type: 'submit', id: 'rule-save', value: 'save' }, rule ? (live ? 'Save and put live' : 'Save a new version') : 'Create rule');
  const saveDraft = live ? h('button', { type: 'submit', id: 'rule-save-draft', value: 'draft', class: 'secondary' }, 'Save as a draft') : null;
  const backtest = h('button', { type: 'button', id: 'rule-backtest', class: 'secondary' }, rule ? 'Backtest' : 'Backtest this expression');

  const field = (label: string, input: HTMLElement, cls = 'field', hint?: HTMLElement) => h('label', { class: cls }, h('span', {}, label), input, hint ?? null);
  const form = h(
    'form',
    { class: 'card form', id: 'rule-editor', 'aria-labelledby': 'rule-editor-title', novalidate: true },
    h('h2', { id: 'rule-editor-title' }, rule ? `Edit (version ${rule.version} is the newest)` : 'Write the rule'),
    h(
      'div',
      { class: 'grid' },
      field('Name', name),
      field('Action when it matches', action),
      status ? field('Status', status) : null,
      field('Description (optional)', description, 'field wide'),
    ),
    h(
      'label',
      { class: 'field wide' },
      h('span', {}, 'Expression (CEL), true when the rule matches'),
      expression,
      h(
        'span',
        { class: 'field-hint', id: 'rule-expression-hint' },
        'E.g. amount > 1000.0 && customer.is_new, or in_list("blocked_customers", customer_id). Checked as you type; Ctrl+Enter saves.',
      ),
    ),
    h('div', { class: 'check-result', id: 'rule-check' }, summary, problems),
    h(
      'div',
      { class: 'grid' },
      field(
        'Evaluate on a transaction (optional)',
        transaction,
        'field wide',
        h('span', { class: 'field-hint', id: 'rule-transaction-hint' }, 'On what that transaction’s decision saw, with the lists as they were then.'),
      ),
    ),
    evaluation,
    h(
      'fieldset',
      { class: 'period' },
      h('legend', {}, 'Backtest period (UTC; leave empty for everything scored)'),
      h('div', { class: 'grid' }, field('From', from), field('Before', to)),
    ),
    h('div', { class: 'actions' }, save, saveDraft, backtest),
    saveStatus,
    reference(org),
  );

  let seq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const showProblems = (text: string, list: Problem[]) => {
    expression.setAttribute('aria-invalid', list.length ? 'true' : 'false');
    problems.replaceChildren(
      ...list.map((p) => {
        const go = h(
          'button',
          { type: 'button', class: 'link', 'data-line': String(p.line), 'data-column': String(p.column) },
          `Line ${p.line}, column ${p.column}`,
        );
        go.addEventListener('click', () => {
          const at = offsetOf(text, p.line, p.column);
          expression.focus();
          expression.setSelectionRange(at, at);
        });
        const source = text.split('\n')[p.line - 1] ?? '';
        return h('li', {}, go, `: ${p.message}`, h('pre', { class: 'excerpt', 'aria-hidden': 'true' }, `${source}\n${' '.repeat(Math.max(0, p.column - 1))}^`));
      }),
    );
  };
  const setSummary = (cls: 'ok' | 'bad' | 'pending', text: string) => {
    summary.className = `check-summary ${cls}`;
    summary.textContent = text;
  };
  const showCheck = (text: string, r: Pick<CheckResult, 'valid' | 'errors'> & Partial<Pick<CheckResult, 'lists'>>) => {
    if (r.valid) {
      const lists = r.lists ?? [];
      setSummary('ok', `No problems: it can be saved.${lists.length ? ` It reads the list${lists.length > 1 ? 's' : ''} ${lists.join(', ')}.` : ''}`);
      showProblems(text, []);
    } else {
      const first = r.errors[0]!;
      setSummary(
        'bad',
        `${r.errors.length} problem${r.errors.length > 1 ? 's' : ''}, the first at line ${first.line}, column ${first.column}: ${first.message}`,
      );
      showProblems(text, r.errors);
    }
  };
  const showEvaluation = (e: CheckResult['evaluation']) => {
    if (!e) {
      evaluation.replaceChildren();
      return;
    }
    const link = h('a', { href: transactionHref(org.id, e.transaction_id) }, e.transaction_id);
    const verdict = e.error
      ? h(
          'p',
          { id: 'rule-matched', class: 'matched-no' },
          'It could not be evaluated on ',
          link,
          `: ${e.error}. A rule that cannot be evaluated does not match.`,
        )
      : e.matched
        ? h(
            'p',
            { id: 'rule-matched', class: 'matched-yes', 'data-matched': 'true' },
            'It matches ',
            link,
            `: this rule would ${ACTION_WORDS[action.value]!.does}.`,
          )
        : h('p', { id: 'rule-matched', class: 'matched-no', 'data-matched': 'false' }, 'It does not match ', link, '.');
    const rows = flatValues(e.values ?? {});
    evaluation.replaceChildren(
      verdict,
      ...(rows.length
        ? [
            h(
              'div',
              { id: 'rule-values', class: 'values-table' },
              table(
                ['Value read', 'As the decision saw it'],
                rows.map(([k, v]) => [h('code', {}, k), v]),
              ),
            ),
          ]
        : []),
    );
  };

  const check = async () => {
    const n = ++seq;
    const text = expression.value;
    const id = transaction.value.trim();
    if (text.trim() === '') {
      setSummary('pending', 'Write a condition, e.g. amount > 1000.0');
      showProblems(text, []);
      showEvaluation(undefined);
      return;
    }
    const ask = (withTransaction: boolean) =>
      api<CheckResult>(`${base}/check`, { method: 'POST', body: { expression: text, ...(withTransaction && id ? { transaction_id: id } : {}) } });
    try {
      const r = await ask(true);
      if (n !== seq) return;
      showCheck(text, r);
      showEvaluation(r.evaluation);
    } catch (e) {
      if (n !== seq) return;
      if (e instanceof ApiError && e.status === 404 && id) {
        // The transaction is not there: say so, and still check the text on its own.
        evaluation.replaceChildren(h('p', { id: 'rule-matched', class: 'matched-no' }, e.message));
        const r = await ask(false).catch(() => undefined);
        if (r && n === seq) showCheck(text, r);
      } else {
        setSummary('bad', 'The expression could not be checked.');
        problems.replaceChildren(h('li', {}, errorBox(e)));
      }
    }
  };
  // While typing, the last answer is only greyed: the live region changes once, when the new
  // answer arrives, rather than saying "Checking" at every key.
  const schedule = () => {
    clearTimeout(timer);
    summary.classList.add('stale');
    timer = setTimeout(() => void check(), CHECK_AFTER_MS);
  };
  expression.addEventListener('input', schedule);
  transaction.addEventListener('input', schedule);
  // The explanation of a match names the action; a change of action says it anew.
  action.addEventListener('change', () => void check());
  expression.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      form.requestSubmit(save);
    }
  });

  /** What changed against the saved rule (all of it for a new one). */
  const changes = (): RuleChanges => {
    const desc = description.value.trim();
    if (!rule)
      return { name: name.value.trim(), expression: expression.value, action: action.value, status: status!.value, ...(desc ? { description: desc } : {}) };
    const c: RuleChanges = {};
    if (name.value.trim() !== rule.name) c.name = name.value.trim();
    if (expression.value !== rule.expression) c.expression = expression.value;
    if (action.value !== rule.action) c.action = action.value;
    if (desc !== (rule.description ?? '')) c.description = desc || null;
    return c;
  };
  const failed = (e: unknown, doing: string) => {
    if (e instanceof ApiError && e.reason === 'invalid_rule' && Array.isArray(e.detail.errors)) {
      const errors = e.detail.errors as Problem[];
      showCheck(expression.value, { valid: false, errors });
      expression.focus();
    }
    saveStatus.replaceChildren(h('p', {}, `${doing} failed:`), errorBox(e));
  };

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const draft = (ev as SubmitEvent).submitter?.id === 'rule-save-draft';
    if (!name.value.trim()) {
      saveStatus.replaceChildren(h('p', { class: 'error' }, 'Give the rule a name.'));
      name.focus();
      return;
    }
    const body = changes();
    const content = body.expression !== undefined || body.action !== undefined || body.description !== undefined;
    if (rule && Object.keys(body).length === 0) {
      saveStatus.replaceChildren(h('p', { class: 'muted' }, 'Nothing to save: the rule is as saved.'));
      return;
    }
    if (draft && !content) {
      saveStatus.replaceChildren(
        h('p', { class: 'muted' }, 'A draft needs a new expression, action or description; the name alone is saved with “Save and put live”.'),
      );
      return;
    }
    saveStatus.replaceChildren(h('p', { class: 'muted' }, 'Saving…'));
    try {
      const saved = rule
        ? await api<Rule>(`${base}/${encodeURIComponent(rule.id)}`, { method: 'PUT', body: draft ? { ...body, status: 'draft' } : body })
        : await api<Rule>(base, { method: 'POST', body });
      const message = !rule
        ? `Created ${saved.name} (${saved.status}).`
        : content
          ? saved.live_version === saved.version
            ? `Saved version ${saved.version}; it is live.`
            : `Saved version ${saved.version}${draft && saved.live_version ? `, a draft: version ${saved.live_version} stays live` : ''}.`
          : 'Saved.';
      onSaved(saved, message, draft ? 'rule-save-draft' : 'rule-save');
    } catch (e) {
      failed(e, 'Saving');
    }
  });

  backtest.addEventListener('click', async () => {
    // The saved version when the text is as saved (then the report compares it with the live
    // version if another is live); otherwise the text as it is, unsaved.
    const c = rule ? changes() : undefined;
    const unchanged = rule && c!.expression === undefined && c!.action === undefined;
    if (!expression.value.trim()) {
      saveStatus.replaceChildren(h('p', { class: 'error' }, 'Write an expression to backtest.'));
      expression.focus();
      return;
    }
    saveStatus.replaceChildren(h('p', { class: 'muted' }, 'Queueing the backtest…'));
    try {
      await queueBacktest(org, unchanged ? { rule_id: rule!.id } : { expression: expression.value, action: action.value }, period());
    } catch (e) {
      failed(e, 'The backtest');
    }
  });

  const period = (): Period => ({ from: utcInput(from.value), to: utcInput(to.value) });
  if (expression.value) void check();
  else setSummary('pending', 'Write a condition, e.g. amount > 1000.0');
  return {
    form,
    period,
    load(v: RuleVersion) {
      expression.value = v.expression;
      action.value = v.action;
      description.value = v.description ?? '';
      saveStatus.replaceChildren(h('p', { class: 'muted' }, `Version ${v.version} is in the editor; save it to make it the newest version again.`));
      expression.focus();
      void check();
    },
  };
}

/** What an expression can read, folded away until asked for: the service's fields, the
 *  organization's own (read from the fields API), the functions. */
function reference(org: Organization): HTMLElement {
  return h(
    'details',
    { id: 'rule-reference' },
    h('summary', {}, 'What an expression can read'),
    h(
      'div',
      { class: 'reference-table' },
      table(
        ['Field', 'Type', 'Meaning'],
        RULE_FIELDS.map((f) => [h('code', {}, f.name), f.type, f.about]),
      ),
    ),
    ownFields(org),
    h(
      'div',
      { class: 'reference-table' },
      table(
        ['Function', 'Example', 'Meaning'],
        RULE_FUNCTIONS.map((f) => [h('code', {}, f.name), h('code', {}, f.example), f.about]),
      ),
    ),
    h(
      'p',
      { class: 'muted' },
      'Numbers with a decimal point are doubles (amount > 100.0); hour and weekday are whole numbers (hour < 6). Join conditions with && and ||.',
    ),
  );
}

/** The organization's declared fields as a rule reads them (`fields.<name>`, its CEL type, its
 *  description), filled in once the fields API answers; a line pointing to the Fields page when it
 *  has none. Drawn inside the reference, whether or not it is open. */
function ownFields(org: Organization): HTMLElement {
  const box = h('div', { id: 'rule-own-fields' }, h('p', { class: 'muted' }, 'Reading your organization’s own fields…'));
  api<FieldList>(`/api/organizations/${encodeURIComponent(org.id)}/fields`)
    .then(({ data }) => {
      if (data.length === 0) {
        box.replaceChildren(
          h(
            'p',
            { class: 'muted', id: 'rule-no-own-fields' },
            `${org.name} has no fields of its own yet: an owner can declare them on the `,
            h('a', { href: fieldsHref(org.id) }, 'Fields'),
            ' page, and rules then read them as fields.<name>.',
          ),
        );
        return;
      }
      box.replaceChildren(
        h(
          'div',
          { class: 'reference-table' },
          table(
            ['Field', 'Type', 'Meaning'],
            data.flatMap((f) => [
              [
                h('code', {}, `fields.${f.name}`),
                FIELD_CEL_TYPES[f.type],
                `${f.description ?? 'No description.'}${f.key ? ' A key: its values have a history of their own.' : ''}`,
              ],
              ...(f.key
                ? [
                    [
                      h('code', {}, `field_history.${f.name}`),
                      'history',
                      `This value's earlier transactions, strictly before the payment: .prior_transactions, .is_new, .count_1h, .count_24h, .count_7d, .amount_24h, .distinct_customers_24h, .distinct_customers_30d.`,
                    ],
                  ]
                : []),
            ]),
            `${org.name}'s own fields (Fields page); a payment that does not carry one does not match a rule that reads it; has(fields.<name>) tests whether it was sent.`,
          ),
        ),
      );
    })
    .catch((e) => box.replaceChildren(h('p', { class: 'muted' }, 'Your organization’s own fields could not be read:'), errorBox(e)));
  return box;
}
