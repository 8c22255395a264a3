// A file the check refused: what is wrong with it in plain words (a required column it could not
// find, values it cannot read, problems with the file as a whole), and the mapping editor that
// fixes it, pre-filled with the service's suggestion and each header shown with a few of its
// values, so a visitor can check a choice against the data. Also reached from a valid upload to
// change its mapping. Once the file checks out, the caller's `showValid` shows it (dataset.ts):
// passed in, since that view opens this editor in turn.
// An organization's upload can be imported into its history, which stores the organization's own
// declared fields with each row: the file's columns not used as ours are then offered as those
// fields (each field for one column at most; a column whose name is a field's is suggested).

import { api, ApiError } from '../../api.ts';
import type { Dataset, DatasetValidation, Field, FieldList, Preview } from '../../contract.ts';
import { h, table } from '../../dom.ts';
import { plainError, plural } from './words.ts';

const COLUMNS = ['amount', 'customer_id', 'merchant_id', 'transaction_id', 'timestamp', 'location', 'payment_type', 'label'] as const;
const REQUIRED = new Set<string>(['amount', 'customer_id', 'merchant_id']);
/** What each column means, in words. */
const MEANING: Record<string, string> = {
  amount: 'Amount',
  customer_id: 'Customer (who pays)',
  merchant_id: 'Merchant (who is paid)',
  transaction_id: 'Transaction id',
  timestamp: 'Time',
  location: 'Location',
  payment_type: 'Payment type',
  label: 'Fraud label (1 fraud, 0 legitimate)',
};

/** What the check found, one problem a line, each with its fix. */
function problemsList(v: DatasetValidation): HTMLElement {
  return h(
    'ul',
    { class: 'problems' },
    ...v.missing_required.map((c) => h('li', {}, `${MEANING[c]} is required: choose the column that holds it.`)),
    ...(v.missing_fields ?? []).map((f) => h('li', {}, `The column chosen for your field ${f} is not in the file: choose another, or none.`)),
    ...v.problems.map((p) =>
      h(
        'li',
        {},
        `Column “${p.header}” ${p.message} in ${plural(p.count, 'row')} (first: ${p.rows.join(', ')}${p.examples?.length ? `; e.g. ${p.examples.map((x) => `“${x}”`).join(', ')}` : ''}). ${p.fix}`,
      ),
    ),
    ...v.file_problems.map((p) => h('li', {}, `${p.message} ${p.fix}`)),
  );
}

/** What the editor starts from besides the check's findings. */
export interface MappingOptions {
  /** Our columns as mapped now (opened from a valid upload to change its mapping). */
  current?: Partial<Record<string, string | null>>;
  /** The organization the upload belongs to: its declared fields are offered for the other columns. */
  organization?: { id: string; name: string } | undefined;
  /** The fields mapped now: field → header. */
  fields?: Readonly<Record<string, string>> | undefined;
}

/** A header as a field's name would be written (lower case, `_` between words). */
const asFieldName = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

/** The mapping editor: for each of our columns, the file's header that holds it (pre-filled with
 *  what is used now, else the suggestion) and a few of that header's values; then the file's own
 *  columns with their values and what each is used as, or, for an organization's upload, which of
 *  its declared fields a column not used as ours holds. */
export async function showMapping(
  work: HTMLElement,
  id: string,
  v: DatasetValidation,
  showValid: (d: Dataset) => void,
  refreshHistory: () => void,
  o: MappingOptions = {},
): Promise<void> {
  const { current, organization } = o;
  const [samples, declared] = await Promise.all([
    api<Preview>(`/api/datasets/${encodeURIComponent(id)}/preview?rows=1`)
      .then((p) => p.samples ?? {})
      // The editor works without the values.
      .catch(() => ({}) as Record<string, string[]>),
    organization
      ? api<FieldList>(`/api/organizations/${encodeURIComponent(organization.id)}/fields`)
          .then((l) => l.data)
          // Without the declarations the editor maps our columns only.
          .catch(() => [] as Field[])
      : Promise.resolve([] as Field[]),
  ]);
  const headers = v.columns_found;
  const suggested: Partial<Record<(typeof COLUMNS)[number], string>> = v.suggested_mapping ?? {};
  const examples = (header: string) => (samples[header]?.length ? samples[header]!.join(', ') : '');
  const initial = (c: (typeof COLUMNS)[number]) => current?.[c] ?? v.columns?.[c] ?? suggested[c] ?? '';
  const selects = new Map<string, HTMLSelectElement>();
  const seens = new Map<string, HTMLElement>();
  const rows = COLUMNS.map((c) => {
    const s = h(
      'select',
      { id: `map-${c}`, name: c },
      h('option', { value: '' }, REQUIRED.has(c) ? '— choose —' : '— not in my file —'),
      ...headers.map((hd) => h('option', { value: hd }, hd)),
    );
    s.value = initial(c);
    selects.set(c, s);
    const seen = h('span', { class: 'map-samples muted', id: `samples-${c}` });
    seens.set(c, seen);
    const guessed = !v.columns?.[c] && suggested[c] !== undefined && s.value === suggested[c];
    return h(
      'div',
      { class: `map-row${REQUIRED.has(c) ? ' required' : ''}` },
      h('label', { for: `map-${c}` }, MEANING[c], REQUIRED.has(c) ? h('span', { class: 'muted' }, ' (required)') : null, h('code', { class: 'muted' }, c)),
      s,
      h('span', { class: 'map-note' }, seen, guessed ? h('span', { class: 'suggested' }, 'suggested') : null),
    );
  });
  const fileColumns = h('div', { id: 'file-columns' });
  // The organization's fields each column holds (header → field): what is mapped now, else a
  // column named like a field.
  const fieldOf = new Map<string, string>();
  const mappedNow = Object.entries(o.fields ?? {});
  for (const [name, header] of mappedNow) if (headers.includes(header) && declared.some((f) => f.name === name)) fieldOf.set(header, name);
  if (mappedNow.length === 0)
    for (const hd of headers) {
      const f = declared.find((d) => d.name === asFieldName(hd));
      if (f && ![...fieldOf.values()].includes(f.name)) fieldOf.set(hd, f.name);
    }
  const fieldSelects = new Map<string, HTMLSelectElement>();
  /** Each field for one column at most: the ones taken by another column are greyed out. */
  const markTaken = () => {
    for (const [hd, s] of fieldSelects)
      for (const option of s.options) option.disabled = option.value !== '' && [...fieldOf].some(([other, name]) => other !== hd && name === option.value);
  };
  const fieldChoice = (hd: string, i: number) => {
    const s = h(
      'select',
      { id: `field-for-${i}`, name: `field-for-${i}`, class: 'field-choice', 'aria-label': `Field of yours for column ${hd}` },
      h('option', { value: '' }, 'not used'),
      ...declared.map((f) => h('option', { value: f.name }, `field ${f.name} (${f.type}${f.key ? ', key' : ''})`)),
    );
    s.value = fieldOf.get(hd) ?? '';
    s.addEventListener('change', () => {
      if (s.value) fieldOf.set(hd, s.value);
      else fieldOf.delete(hd);
      markTaken();
    });
    fieldSelects.set(hd, s);
    return s;
  };
  const update = () => {
    for (const [c, s] of selects) seens.get(c)!.textContent = s.value ? `e.g. ${examples(s.value) || '(empty)'}` : '';
    const usedAs = new Map<string, string[]>();
    for (const [c, s] of selects) if (s.value) usedAs.set(s.value, [...(usedAs.get(s.value) ?? []), MEANING[c]!]);
    // A column used as ours is no field of the organization's.
    for (const hd of usedAs.keys()) fieldOf.delete(hd);
    fieldSelects.clear();
    fileColumns.replaceChildren(
      table(
        ['Column in your file', 'Values', 'Used as'],
        headers.map((hd, i) => [h('code', {}, hd), examples(hd) || '—', usedAs.get(hd)?.join(', ') ?? (declared.length ? fieldChoice(hd, i) : 'not used')]),
      ),
    );
    markTaken();
  };
  for (const s of selects.values()) s.addEventListener('change', update);
  const missing = v.missing_required.map((c) => MEANING[c]!.replace(/ \(.*/, '').toLowerCase());
  const anySuggested = COLUMNS.some((c) => !v.columns?.[c] && suggested[c] !== undefined);
  const timeNote = !selects.get('timestamp')!.value
    ? headers.some((hd) => hd.trim().toLowerCase() === 'step')
      ? 'Time is left empty: “step” counts hours (as in PaySim), but numeric times are read as seconds, so using it would squeeze the file’s hours into seconds. Without a time, rows are taken in file order.'
      : 'Without a time, rows are taken in file order.'
    : null;
  const apply = h('button', { type: 'submit' }, 'Apply mapping');
  const form = h(
    'form',
    { class: 'card form', id: 'mapping', 'aria-labelledby': 'mapping-title' },
    h('h2', { id: 'mapping-title' }, 'Match your columns'),
    h(
      'p',
      {},
      current
        ? 'Choose which of your columns holds each thing, then check the file again.'
        : anySuggested
          ? 'We filled this in from your column names. Check each choice against the example values, then apply it.'
          : 'Choose which of your columns holds each thing, then apply it.',
    ),
    h('div', { class: 'map-grid' }, ...rows),
    timeNote ? h('p', { class: 'muted', id: 'time-note' }, timeNote) : null,
    // With fields to choose below, the button comes after them.
    declared.length ? null : h('div', { class: 'actions' }, apply),
    h('h3', {}, 'Columns in your file'),
    declared.length
      ? h(
          'p',
          { id: 'fields-note' },
          `A column you do not use above can hold one of ${organization!.name}’s own fields: choose which. Imported into ${organization!.name}’s history, each row keeps its values (a number field needs numbers; a yes/no field true/false, yes/no or 1/0; an empty cell: the row has none). Card numbers and IP addresses are never accepted.`,
        )
      : null,
    fileColumns,
    declared.length ? h('div', { class: 'actions' }, apply) : null,
  );
  update();
  const intro = current
    ? null
    : h(
        'div',
        { class: 'card', id: 'what-to-fix' },
        h('h2', {}, 'This file needs a little help'),
        h(
          'p',
          {},
          missing.length
            ? `We could not tell which columns hold the ${missing.length > 1 ? `${missing.slice(0, -1).join(', the ')} and the ${missing.at(-1)}` : missing[0]}.`
            : 'Some values cannot be read as they are.',
        ),
        problemsList(v),
        h('p', { class: 'muted reason-code' }, 'Reason code: validation_failed'),
      );
  work.replaceChildren(...(intro ? [intro] : []), form);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const mapping: Record<string, string | Record<string, string>> = {};
    for (const [c, s] of selects) if (s.value) mapping[c] = s.value;
    const fields = Object.fromEntries([...fieldOf].map(([hd, name]) => [name, hd]));
    if (fieldOf.size) mapping.fields = fields;
    apply.disabled = true;
    try {
      showValid(await api<Dataset>(`/api/datasets/${encodeURIComponent(id)}/validate`, { method: 'POST', body: { mapping } }));
    } catch (err) {
      // Still not scorable (422 validation_failed): what the check found with this mapping.
      const found = err instanceof ApiError ? (err.detail as { validation?: DatasetValidation }).validation : undefined;
      if (found) await showMapping(work, id, found, showValid, refreshHistory, { organization, fields });
      else work.replaceChildren(plainError(err));
    }
    refreshHistory();
  });
}
