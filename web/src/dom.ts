// Small helpers for building the pages with the DOM directly (no framework): an element factory
// that only ever sets text (never HTML, so no value from the service can inject markup), number
// formatting, and an error box that shows the service's message and fix.

import { ApiError } from './api.ts';

type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

export const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)} %`;
export const num = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? '—' : x.toFixed(digits));

export function errorBox(e: unknown): HTMLElement {
  if (e instanceof ApiError)
    return h('div', { class: 'error', role: 'alert' }, h('strong', {}, e.message), e.fix ? h('p', {}, e.fix) : null, h('code', {}, e.reason));
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'Something went wrong.'), h('p', {}, String((e as Error)?.message ?? e)));
}

/** A labelled horizontal bar for a value in [-1, 1] (signed) or [0, 1]. */
export function bar(label: string, value: number, signed = false): HTMLElement {
  const width = Math.min(100, Math.abs(value) * 100);
  const fill = h('span', { class: `fill ${value < 0 ? 'neg' : 'pos'}` });
  fill.style.width = `${signed ? width / 2 : width}%`;
  if (signed) fill.style[value < 0 ? 'right' : 'left'] = '50%';
  return h(
    'div',
    { class: `bar ${signed ? 'signed' : ''}`, role: 'img', 'aria-label': `${label}: ${signed ? value.toFixed(3) : pct(value)}` },
    h('span', { class: 'bar-label' }, label),
    h('span', { class: 'track' }, fill),
    h('span', { class: 'bar-value' }, signed ? value.toFixed(3) : pct(value)),
  );
}

/** A table with column headers and, when given, a caption that names it; on a phone each row
 *  becomes a block of "header: value" lines (style.css), so nothing is cut off. A cell is text or
 *  an element (a link, a button). */
export function table(head: string[], rows: (string | Node)[][], caption?: string): HTMLElement {
  const wrap = h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'stack' },
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c, i) => h('td', { 'data-label': head[i] ?? '' }, c))))),
    ),
  );
  // A table wider than its box scrolls sideways: it then takes keyboard focus, so the arrow keys
  // can scroll it, and only then (one tab stop per table that needs it).
  new ResizeObserver(() => {
    if (wrap.scrollWidth > wrap.clientWidth) wrap.setAttribute('tabindex', '0');
    else wrap.removeAttribute('tabindex');
  }).observe(wrap);
  return wrap;
}

/** A time as the service sends it (ISO 8601 UTC), shown as "2026-11-23 10:15:00 UTC". */
export const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

/** An amount in the transaction's currency units, two decimals with thousands separators. */
export const money = (x: number) => x.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** A listing's filter: a labelled select of `options` ([value, text]) after "Any", `value` chosen. */
export function filterSelect(name: string, label: string, options: readonly (readonly [string, string])[], value: string | undefined): HTMLElement {
  return h(
    'label',
    { class: 'field' },
    h('span', {}, label),
    h(
      'select',
      { name, id: `filter-${name}` },
      h('option', { value: '' }, 'Any'),
      ...options.map(([v, text]) => h('option', { value: v, selected: value === v }, text)),
    ),
  );
}
