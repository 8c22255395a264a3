// Rules: an organization's own rules, run after the model on every payment its API keys score
// (allow, then block, then review decide over the model's thresholds; shadow rules are recorded
// and never decide). The list shows each rule's action, status, live version and how many
// transactions it matched, or could not be evaluated on, over the last 7 days, linked to those
// transactions. A rule's page has its status and the buttons that change it (activate, shadow,
// disable, delete), the editor (editor.ts), its versions, each one backtested or opened in the
// editor, and a link to the transactions it matched. A backtest's report (backtest.ts) has its own
// address. Addresses: #/rules, #/rules/new, #/rules/{rule_id}, #/rules/backtests/{job_id}.

import { api } from '../../api.ts';
import type { Rule, RuleList, RuleVersions } from '../../contract.ts';
import { errorBox, h, table, utc } from '../../dom.ts';
import { listsHref, ruleHref, rulesHref, transactionsHref } from '../../links.ts';
import { organizationFor, type Organization } from '../../org.ts';
import type { Route } from '../../route.ts';
import { backtestPage, queueBacktest } from './backtest.ts';
import { ACTION_WORDS, ruleEditor } from './editor.ts';
import './rules.css';

const STATUS_WORDS: Record<string, string> = {
  draft: 'Draft: saved, not run on payments.',
  shadow: 'Shadow: run on every payment and its matches recorded, but it never changes a decision.',
  active: 'Active: it decides the payments it matches.',
  disabled: 'Disabled: not run.',
};

export async function rulesPage(root: HTMLElement, route: Route): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'rules', 'Rules');
    if (!chosen) return;
    const [, first, second] = route.path;
    if (first === 'new') newRule(root, chosen.org);
    else if (first === 'backtests' && second) await backtestPage(root, chosen.org, second);
    else if (first) await rulePage(root, chosen.org, first);
    else await ruleList(root, chosen.org, chosen.picker);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Rules'), errorBox(e));
  }
}

const base = (org: Organization) => `/api/organizations/${encodeURIComponent(org.id)}/rules`;

/** The live version in words: "2", "2 (3 waits as a draft)", or "none". */
function liveText(r: Rule): string {
  if (r.live_version === null || r.status === 'draft' || r.status === 'disabled') return 'none';
  return r.live_version === r.version ? String(r.live_version) : `${r.live_version} (${r.version} waits as a draft)`;
}

async function ruleList(root: HTMLElement, org: Organization, picker: HTMLElement | null): Promise<void> {
  const { data } = await api<RuleList>(base(org));
  root.replaceChildren(
    h('h1', {}, 'Rules'),
    h(
      'div',
      { class: 'actions' },
      picker,
      h(
        'p',
        { class: 'muted' },
        `${org.name}: rules run after the model on every payment scored with its API keys. An allow rule decides over block, block over review, and review over the model's thresholds; shadow rules are only recorded. Counts are of the last 7 days.`,
      ),
    ),
    h(
      'div',
      { class: 'actions' },
      h('a', { class: 'button', href: rulesHref(org.id, '/new'), id: 'new-rule' }, 'New rule'),
      h('a', { class: 'button secondary', href: listsHref(org.id) }, 'Lists'),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'rule-list-title' },
      h('h2', { id: 'rule-list-title' }, `${data.length} rule${data.length === 1 ? '' : 's'}`),
      data.length === 0
        ? h(
            'p',
            { class: 'muted', id: 'no-rules' },
            'No rules yet. Write one with New rule; a rule that reads a list, like in_list("blocked_customers", customer_id), needs the list first (Lists).',
          )
        : h(
            'div',
            { id: 'rule-list' },
            table(
              ['Rule', 'Action', 'Status', 'Live version', 'Matched (7 days)', 'Errors (7 days)', 'Changed'],
              data.map((r) => [
                h('a', { href: ruleHref(org.id, r.id) }, r.name),
                h('span', { class: `action-${r.action}` }, r.action),
                h('span', { class: `status-${r.status}` }, r.status),
                liveText(r),
                r.matches_7d
                  ? h(
                      'a',
                      { href: transactionsHref({ org: org.id, rule_id: r.id }), 'aria-label': `${r.matches_7d} transactions matched by ${r.name}` },
                      r.matches_7d.toLocaleString('en'),
                    )
                  : '0',
                r.errors_7d.toLocaleString('en'),
                utc(r.updated_at),
              ]),
            ),
          ),
    ),
  );
}

function newRule(root: HTMLElement, org: Organization): void {
  const editor = ruleEditor(org, undefined, (saved) => {
    location.hash = ruleHref(org.id, saved.id);
  });
  root.replaceChildren(
    h('h1', {}, 'New rule'),
    h('p', {}, h('a', { href: rulesHref(org.id) }, '← All rules')),
    h(
      'p',
      { class: 'muted' },
      'A rule is a condition on the payment, what the model made of it and the lists. Start it as a draft or in shadow to see what it matches before it decides anything; backtest it on what was scored already.',
    ),
    editor.form,
  );
}

async function rulePage(root: HTMLElement, org: Organization, ruleId: string, message?: string): Promise<void> {
  const [r, versions] = await Promise.all([
    api<Rule>(`${base(org)}/${encodeURIComponent(ruleId)}`),
    api<RuleVersions>(`${base(org)}/${encodeURIComponent(ruleId)}/versions`),
  ]);
  const status = h('div', { id: 'rule-status-message', class: 'notice', role: 'status', 'aria-live': 'polite' }, message ?? '');
  // After a change the page is drawn anew; focus goes back to the button pressed (or, when it is
  // gone, as the status it set is now the current one, the first of its group), so a keyboard
  // user carries on from where they were.
  const again = async (text: string, button: string) => {
    await rulePage(root, org, ruleId, text);
    (document.getElementById(button) ?? document.querySelector<HTMLElement>('#rule-status-buttons button'))?.focus();
  };
  const editor = ruleEditor(org, r, (_saved, text, button) => void again(text, button).catch((e) => status.replaceChildren(errorBox(e))));

  const change = (label: string, body: { status: Rule['status'] }, id: string, cls = 'secondary') => {
    const b = h('button', { type: 'button', id, class: cls }, label);
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        const saved = await api<Rule>(`${base(org)}/${encodeURIComponent(r.id)}`, { method: 'PUT', body });
        await again(
          `${saved.name} is ${saved.status}${saved.status === 'active' || saved.status === 'shadow' ? `, version ${saved.live_version} live` : ''}.`,
          id,
        );
      } catch (e) {
        status.replaceChildren(errorBox(e));
        b.disabled = false;
      }
    });
    return b;
  };
  const remove = h('button', { type: 'button', id: 'rule-delete', class: 'secondary' }, 'Delete');
  remove.addEventListener('click', async () => {
    if (!confirm(`Delete ${r.name}? It stops running at once; its versions and matches are kept for the record.`)) return;
    try {
      await api<null>(`${base(org)}/${encodeURIComponent(r.id)}`, { method: 'DELETE' });
      location.hash = rulesHref(org.id);
    } catch (e) {
      status.replaceChildren(errorBox(e));
    }
  });
  const waiting = r.live_version !== null && r.version !== r.live_version && (r.status === 'active' || r.status === 'shadow');
  const buttons = [
    waiting ? change(`Put version ${r.version} live${r.status === 'shadow' ? ' in shadow' : ''}`, { status: r.status }, 'rule-put-live', '') : null,
    r.status !== 'active' ? change('Activate', { status: 'active' }, 'rule-activate', '') : null,
    r.status !== 'shadow' ? change('Run in shadow', { status: 'shadow' }, 'rule-shadow') : null,
    r.status !== 'disabled' ? change('Disable', { status: 'disabled' }, 'rule-disable') : null,
    remove,
  ];

  const versionRows = versions.data.map((v) => {
    const test = h('button', { type: 'button', class: 'secondary', id: `backtest-v${v.version}`, 'aria-label': `Backtest: version ${v.version}` }, 'Backtest');
    test.addEventListener('click', async () => {
      try {
        await queueBacktest(org, { rule_id: r.id, version: v.version }, editor.period());
      } catch (e) {
        status.replaceChildren(errorBox(e));
      }
    });
    const open = h('button', { type: 'button', class: 'secondary', 'aria-label': `Open in the editor: version ${v.version}` }, 'Open in the editor');
    open.addEventListener('click', () => editor.load(v));
    const live = v.version === r.live_version && (r.status === 'active' || r.status === 'shadow');
    return [
      `${v.version}${live ? ' (live)' : v.version === r.version && waiting ? ' (draft)' : ''}`,
      h('span', { class: `action-${v.action}` }, v.action),
      h('code', { class: 'expression' }, v.expression),
      v.lists.length ? h('span', {}, ...v.lists.flatMap((l, i) => [i ? ', ' : '', h('a', { href: listsHref(org.id, l) }, l)])) : '—',
      `${utc(v.created_at)} by ${v.created_by}`,
      h('span', { class: 'actions' }, test, open),
    ];
  });

  root.replaceChildren(
    h('h1', {}, `Rule ${r.name}`),
    h('p', {}, h('a', { href: rulesHref(org.id) }, '← All rules')),
    h(
      'section',
      { class: 'card', id: 'rule-summary', 'aria-labelledby': 'rule-summary-title' },
      h('h2', { id: 'rule-summary-title' }, 'Status'),
      h(
        'dl',
        { class: 'kv' },
        ...[
          ['Status', h('span', { class: `status-${r.status}`, id: 'rule-status-now' }, STATUS_WORDS[r.status] ?? r.status)],
          ['Action', `${r.action}: ${ACTION_WORDS[r.action]?.does ?? r.action} when it matches`],
          ['Live version', liveText(r)],
          [
            'Last 7 days',
            h(
              'span',
              {},
              h(
                'a',
                { href: transactionsHref({ org: org.id, rule_id: r.id }), id: 'rule-matches' },
                `${r.matches_7d.toLocaleString('en')} transaction${r.matches_7d === 1 ? '' : 's'} matched`,
              ),
              `, ${r.errors_7d.toLocaleString('en')} could not be evaluated`,
            ),
          ],
          ['Changed', `${utc(r.updated_at)} by ${r.updated_by}`],
          ...(r.description ? [['Description', r.description]] : []),
        ].flatMap(([k, v]) => [h('dt', {}, k as string), h('dd', {}, v as string | Node)]),
      ),
      h('div', { class: 'actions', id: 'rule-status-buttons', role: 'group', 'aria-label': 'Change the status' }, ...buttons),
      status,
    ),
    editor.form,
    h(
      'section',
      { class: 'card', id: 'rule-versions', 'aria-labelledby': 'rule-versions-title' },
      h('h2', { id: 'rule-versions-title' }, 'Versions'),
      h(
        'p',
        { class: 'muted' },
        'Versions never change: each save of a new expression, action or description is a new one. A backtest of a version that is not live compares it with the live one.',
      ),
      h('div', { id: 'version-list' }, table(['Version', 'Action', 'Expression', 'Lists', 'Saved', 'Test or restore'], versionRows)),
    ),
  );
}
