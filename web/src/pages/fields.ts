// Fields: an organization's own fields, which its payments carry as `fields.<name>` and its rules
// read (docs/integrating.md, Custom fields; docs/rules.md, Your own fields). Every member sees the
// fields declared now in name order (type, whether a key, description, who declared them when),
// how much of the limits they use, the retired ones too when asked, and a field's page with its
// change history (the audit). Owners also declare a field (a key only for the string type, the
// browser checking the name as the service does) and retire one after a confirmation that says what
// retiring does and names the rules that read it; a member gets no such control (the service would
// answer 403). The service's refusals (a name taken, a limit reached, a field of the wrong shape)
// are shown with its message and fix. Addresses: #/fields?org=…[&retired=true], #/fields/{name}?org=…,
// and a key field's value's page #/fields/{name}/values/{value}?org=… (key-value.ts).

import { api, ApiError } from '../api.ts';
import type { Field, FieldAudit, FieldList, RuleList } from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { fieldsHref, ruleHref, rulesHref } from '../links.ts';
import { organizationFor, type Organization } from '../org.ts';
import type { Route } from '../route.ts';
import { FIELD_NAME, FIELD_TYPES, type FieldType } from '../../../src/domain/fields.ts';
import { FIELD_CEL_TYPES } from './rules/fields.ts';
import { keyValuePage } from './key-value.ts';
import './rules/rules.css';
import './fields.css';

/** Each type in words. */
const TYPE_WORDS: Record<FieldType, string> = { string: 'Text (string)', number: 'Number', boolean: 'Yes or no (boolean)' };

/** What retiring does, said in the confirmation and on the page. */
const RETIRING =
  'Rules stop reading it (a rule that reads it no longer matches on it); the values already stored with payments are kept; the name becomes free to declare again.';

/** What a drawing of a page carries over from the action that led to it. */
interface Shown {
  message?: string;
  /** The element focused once drawn. */
  focus?: string;
}

export async function fieldsPage(root: HTMLElement, route: Route): Promise<void> {
  if (route.path[2] === 'values') return keyValuePage(root, route);
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'fields', 'Fields');
    if (!chosen) return;
    const name = route.path[1];
    if (name) await fieldPage(root, chosen.org, name);
    else await fieldIndex(root, chosen.org, chosen.picker, route.query.get('retired') === 'true');
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Fields'), errorBox(e));
  }
}

const base = (org: Organization) => `/api/organizations/${encodeURIComponent(org.id)}/fields`;

/** The service's error, with each field a 422 names (`detail.fields`) said in words. */
export function fieldErrorBox(e: unknown): HTMLElement {
  const box = errorBox(e);
  const named = e instanceof ApiError && Array.isArray(e.detail.fields) ? (e.detail.fields as { path?: unknown; message?: unknown }[]) : [];
  if (named.length)
    box.append(
      h(
        'ul',
        { class: 'field-problems' },
        ...named.map((f) => h('li', {}, h('code', {}, String(f.path ?? '').replace(/^body\./, '')), `: ${String(f.message ?? 'invalid')}`)),
      ),
    );
  return box;
}

/** "string, a key" or "number": the type and whether it is a key. */
const kindText = (type: string, key: boolean) => `${type}${key ? ', a key' : ''}`;

/** The rules whose expression names `fields.<name>` (a mention in a quoted string counts too). */
async function rulesReading(org: Organization, name: string): Promise<RuleList['data']> {
  const { data } = await api<RuleList>(`/api/organizations/${encodeURIComponent(org.id)}/rules`);
  const mention = new RegExp(`\\bfields\\.${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
  return data.filter((r) => mention.test(r.expression));
}

/** Asks the owner to confirm retiring `name`, saying what it does and which rules read it; then retires it. */
async function retire(org: Organization, name: string): Promise<boolean> {
  // Naming the rules is a help, not a condition: without them the confirmation still says what retiring does.
  const readers = await rulesReading(org, name).catch(() => undefined);
  const running = readers?.filter((r) => r.status === 'active' || r.status === 'shadow') ?? [];
  const them = running.length
    ? ` ${running.length === 1 ? 'The running rule' : `${running.length} running rules`} ${running.map((r) => `“${r.name}”`).join(', ')} name${running.length === 1 ? 's' : ''} it.`
    : '';
  if (!confirm(`Retire the field ${name}? ${RETIRING}${them}`)) return false;
  await api<Field>(`${base(org)}/${encodeURIComponent(name)}`, { method: 'DELETE' });
  return true;
}

const retiredText = 'Retired: rules no longer read it; its stored values are kept and the name is free again.';

async function fieldIndex(root: HTMLElement, org: Organization, picker: HTMLElement | null, showRetired: boolean, shown: Shown = {}): Promise<void> {
  const { data, limits } = await api<FieldList>(`${base(org)}${showRetired ? '?retired=true' : ''}`);
  const owner = org.role === 'owner';
  const declared = data.filter((f) => f.retired_at === null);
  const keys = declared.filter((f) => f.key).length;
  const status = h('div', { id: 'field-status', class: 'notice', role: 'status', 'aria-live': 'polite' }, shown.message ?? '');
  const again = async (next: Shown) => {
    await fieldIndex(root, org, picker, showRetired, next);
    if (next.focus) document.getElementById(next.focus)?.focus();
  };

  const toggle = h('input', { type: 'checkbox', id: 'fields-show-retired', name: 'retired', checked: showRetired });
  toggle.addEventListener('change', () => {
    location.hash = fieldsHref(org.id, undefined, { retired: toggle.checked ? 'true' : undefined });
  });

  const retireButton = (f: Field) => {
    const b = h('button', { type: 'button', class: 'secondary', id: `field-retire-${f.name}`, 'aria-label': `Retire ${f.name}` }, 'Retire');
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        if (await retire(org, f.name)) await again({ message: `Retired ${f.name}. ${RETIRING}`, focus: 'field-list-title' });
      } catch (e) {
        status.replaceChildren(fieldErrorBox(e));
      } finally {
        b.disabled = false;
      }
    });
    return b;
  };
  const head = ['Field', 'Type', 'Key', 'Description', 'Declared', ...(showRetired ? ['Status'] : []), ...(owner ? ['Retire'] : [])];
  const rows = data.map((f) => [
    h('a', { href: fieldsHref(org.id, f.name) }, f.name),
    f.type,
    f.key ? 'yes' : 'no',
    f.description ?? '—',
    `${utc(f.declared_at)} by ${f.declared_by}`,
    ...(showRetired ? [f.retired_at ? h('span', { class: 'field-retired' }, `Retired ${utc(f.retired_at)} by ${f.retired_by ?? '—'}`) : 'Declared'] : []),
    ...(owner ? [f.retired_at ? '—' : retireButton(f)] : []),
  ]);

  root.replaceChildren(
    h('h1', {}, 'Fields'),
    h(
      'div',
      { class: 'actions' },
      picker,
      h(
        'p',
        { class: 'muted' },
        `${org.name}: the fields of your own that payments carry beside the built-in ones (a card's BIN country, an e-mail domain, whether 3-D Secure passed), sent as "fields" with each score and read by rules as fields.<name>. A payment's value must have the declared type.`,
      ),
    ),
    status,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'field-list-title' },
      h('h2', { id: 'field-list-title', tabindex: '-1' }, `${declared.length} field${declared.length === 1 ? '' : 's'} declared`),
      h(
        'p',
        { id: 'field-limits' },
        `${declared.length} of ${limits.fields} fields, ${keys} of ${limits.keys} key${limits.keys === 1 ? '' : 's'}.`,
        owner ? '' : ' Only owners declare and retire fields.',
      ),
      h('label', { class: 'check' }, toggle, h('span', {}, 'Show retired fields too')),
      data.length === 0
        ? h(
            'p',
            { class: 'muted', id: 'no-fields' },
            showRetired ? 'No fields, declared or retired. ' : 'No fields declared yet. ',
            owner ? 'Declare one below.' : 'An owner of the organization declares them.',
          )
        : h('div', { id: 'field-table', class: 'fields-table' }, table(head, rows)),
      h('p', {}, h('a', { href: rulesHref(org.id) }, 'Rules →')),
    ),
    ...(owner ? [declareForm(org, declared.length >= limits.fields, keys >= limits.keys, limits.keys, again)] : []),
  );
}

function declareForm(org: Organization, fieldsFull: boolean, keysFull: boolean, maxKeys: number, again: (next: Shown) => Promise<void>): HTMLElement {
  const name = h('input', {
    id: 'field-name',
    name: 'name',
    required: true,
    // The service's own rule for a name (domain/fields.ts), which the browser checks before sending.
    pattern: FIELD_NAME.source.replace(/^\^|\$$/g, ''),
    maxlength: '40',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'email_domain',
    'aria-describedby': 'field-name-hint',
  });
  const type = h('select', { id: 'field-type', name: 'type' }, ...FIELD_TYPES.map((t) => h('option', { value: t }, TYPE_WORDS[t])));
  const key = h('input', { type: 'checkbox', id: 'field-key', name: 'key', 'aria-describedby': 'field-key-hint' });
  const keyHint = h('span', { class: 'field-hint', id: 'field-key-hint' });
  const description = h('input', { id: 'field-description', name: 'description', maxlength: '500', autocomplete: 'off' });
  const status = h('div', { id: 'field-declare-status', role: 'status', 'aria-live': 'polite' });
  // A key is for text values only, and only while the organization has fewer keys than its limit.
  const keyAllowed = () => {
    const allowed = type.value === 'string' && !keysFull;
    key.disabled = !allowed;
    if (!allowed) key.checked = false;
    keyHint.textContent = `Each value of a key (one e-mail domain, one device hash) gets a history of its own, like a customer's, for velocity over it: how many payments, customers and how much money it carried before. ${
      keysFull
        ? `The organization has ${maxKeys} keys, the most it may have: retire one to declare another.`
        : type.value === 'string'
          ? `At most ${maxKeys} keys.`
          : 'Only a text (string) field can be a key.'
    }`;
  };
  type.addEventListener('change', keyAllowed);
  keyAllowed();

  const form = h(
    'form',
    { class: 'card form', id: 'field-declare', 'aria-labelledby': 'field-declare-title' },
    h('h2', { id: 'field-declare-title' }, 'Declare a field'),
    fieldsFull
      ? h(
          'p',
          { class: 'muted', id: 'field-full' },
          'The organization has declared as many fields as it may: retire one it no longer sends to declare another.',
        )
      : null,
    h(
      'div',
      { class: 'grid' },
      h(
        'label',
        { class: 'field' },
        h('span', {}, 'Name'),
        name,
        h(
          'span',
          { class: 'field-hint', id: 'field-name-hint' },
          'A lowercase letter, then up to 39 lowercase letters, digits or _. Payments send it under "fields"; rules read it as fields.<name>.',
        ),
      ),
      h('label', { class: 'field' }, h('span', {}, 'Type'), type),
      h('div', { class: 'field wide' }, h('label', { class: 'check' }, key, h('span', {}, 'A key: its values get a history of their own')), keyHint),
      h('label', { class: 'field wide' }, h('span', {}, 'Description (optional)'), description),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'field-declare-submit' }, 'Declare field')),
    status,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const text = description.value.trim();
    try {
      const made = await api<Field>(base(org), {
        method: 'POST',
        body: { name: name.value.trim(), type: type.value, key: key.checked, ...(text ? { description: text } : {}) },
      });
      await again({
        message: `Declared ${made.name} (${kindText(made.type, made.key)}): payments send it as fields.${made.name}, and rules read it so.`,
        focus: 'field-name',
      });
    } catch (e) {
      status.replaceChildren(fieldErrorBox(e));
      name.focus();
    }
  });
  return form;
}

/** A change of the audit in words: "Declared: string, a key, “The part after the @”". */
function changeText(action: string, detail: Record<string, unknown> | null): string {
  const what =
    detail && typeof detail.type === 'string'
      ? `: ${kindText(detail.type, detail.key === true)}${typeof detail.description === 'string' ? `, described “${detail.description}”` : ''}`
      : '';
  switch (action) {
    case 'declared':
      return `Declared${what}`;
    case 'declared_again':
      return `Declared again${what}`;
    case 'retired':
      return 'Retired';
    default:
      return `${action}${what}`;
  }
}

async function fieldPage(root: HTMLElement, org: Organization, name: string, shown: Shown = {}): Promise<void> {
  const path = `${base(org)}/${encodeURIComponent(name)}`;
  // The audit answers not_found, with its message and fix, for a name the organization never declared.
  const [audit, { data }, readers] = await Promise.all([
    api<FieldAudit>(`${path}/audit`),
    api<FieldList>(`${base(org)}?retired=true`),
    rulesReading(org, name),
  ]);
  const f = data.find((x) => x.name === name);
  const owner = org.role === 'owner';
  const status = h('div', { id: 'field-status', class: 'notice', role: 'status', 'aria-live': 'polite' }, shown.message ?? '');
  const parts: (Node | null)[] = [h('h1', {}, `Field ${name}`), h('p', {}, h('a', { href: fieldsHref(org.id) }, '← All fields')), status];
  if (f) {
    const facts: [string, string | Node][] = [
      ['In a rule', h('code', {}, `fields.${f.name}`)],
      ['Type', `${TYPE_WORDS[f.type]}; a rule reads it as a ${FIELD_CEL_TYPES[f.type]}`],
      ['Key', f.key ? 'Yes: its values have a history of their own' : 'No'],
      ['Description', f.description ?? '—'],
      ['Declared', `${utc(f.declared_at)} by ${f.declared_by}`],
      [
        'Rules that name it',
        readers.length
          ? h('span', { id: 'field-rules' }, ...readers.flatMap((r, i) => [i ? ', ' : '', h('a', { href: ruleHref(org.id, r.id) }, r.name), ` (${r.status})`]))
          : h('span', { id: 'field-rules' }, 'none'),
      ],
      [
        'Status',
        h('span', { id: 'field-state' }, f.retired_at ? `${retiredText} (${utc(f.retired_at)} by ${f.retired_by ?? '—'})` : 'Declared: rules read it'),
      ],
    ];
    const actions = h('div', { class: 'actions' });
    if (owner && !f.retired_at) {
      const b = h('button', { type: 'button', class: 'secondary', id: `field-retire-${f.name}` }, 'Retire');
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          if (await retire(org, f.name)) {
            await fieldPage(root, org, name, { message: `Retired ${f.name}. ${RETIRING}` });
            document.getElementById('field-history-title')?.focus();
          }
        } catch (e) {
          status.replaceChildren(fieldErrorBox(e));
        } finally {
          b.disabled = false;
        }
      });
      actions.append(b);
    }
    parts.push(
      h(
        'section',
        { class: 'card', id: 'field-summary', 'aria-label': 'Summary' },
        h('dl', { class: 'kv' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
        actions.childElementCount ? actions : null,
      ),
    );
  }
  parts.push(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'field-history-title' },
      h('h2', { id: 'field-history-title', tabindex: '-1' }, 'Changes, oldest first'),
      audit.data.length === 0
        ? h('p', { class: 'muted' }, 'No change recorded.')
        : h(
            'div',
            { id: 'field-history', class: 'fields-table' },
            table(
              ['When', 'By', 'Change'],
              audit.data.map((e) => [utc(e.at), e.by, changeText(e.action, e.detail)]),
            ),
          ),
    ),
  );
  root.replaceChildren(...parts.filter((p): p is Node => p !== null));
}
