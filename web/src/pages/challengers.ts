// The Models page's organization sections (pages/models.ts draws them below the model cards), one
// pair per organization the member belongs to: the challengers' report (each challenger against the
// model that answered, on the organization's own outcomes: its verdict in words, the evidence, the
// overall figures with the 95 % interval of each difference, the decisions that would change and
// the weeks; what it covers and its main caveat, docs/model.md "Challengers"; and, labelled as
// such, its backtest over the imported history with the same parts), and the model
// history (promotions, rollbacks and challenger changes, newest first, with who), where an owner
// rolls back the last promotion. Also what the page's actions share: a button that runs an API
// call and draws the page again with a message and focus, or shows the service's error beside it.

import { api } from '../api.ts';
import type { ChallengerReport, CustomModelSummary, ModelAudit, Organization, OrganizationWithMembers, RollBack } from '../contract.ts';
import { errorBox, h, money, num, pct, table, utc } from '../dom.ts';

/** What a drawing of the page carries over from the action that led to it. */
export interface Shown {
  /** Said in the status line `${at}-status`. */
  message?: { at: string; text: string };
  /** The element focused once drawn. */
  focus?: string;
}

/** What the page's parts need of it. */
export interface ModelsContext {
  /** A model for people: a custom model's name and id, the built-in model (null or its id). */
  modelName(id: string | null): string;
  /** The custom models listed now, of every organization shown. */
  custom: CustomModelSummary[];
  shown: Shown;
  /** Draws the page again (without blanking it first), then says and focuses what `next` names. */
  again(next: Shown): Promise<void>;
}

/** An id's form usable in element ids. */
export const idKey = (id: string) => id.replace(/[^\w-]/g, '_');

/** The polite status line `${at}-status`, holding the message of the action that led here. */
export function statusLine(ctx: ModelsContext, at: string): HTMLElement {
  return h(
    'div',
    { id: `${at}-status`, class: 'model-status', role: 'status', 'aria-live': 'polite' },
    ctx.shown.message?.at === at ? ctx.shown.message.text : '',
  );
}

/** A button that, confirmed when `confirm` is given, runs `run` and draws the page again with what
 *  it says at `at` and focus where it says; on an error it shows the service's message and fix in
 *  `status` and keeps focus on itself. */
export function actionButton(
  ctx: ModelsContext,
  o: {
    id: string;
    label: string;
    describedBy?: string;
    secondary?: boolean;
    confirm?: string;
    at: string;
    status: HTMLElement;
    run(): Promise<{ text: string; focus: string }>;
  },
): HTMLButtonElement {
  const button = h('button', { type: 'button', id: o.id, class: o.secondary ? 'secondary' : undefined, 'aria-describedby': o.describedBy }, o.label);
  button.addEventListener('click', async () => {
    if (o.confirm && !confirm(o.confirm)) return;
    button.disabled = true;
    try {
      const done = await o.run();
      await ctx.again({ message: { at: o.at, text: done.text }, focus: done.focus });
    } catch (e) {
      o.status.replaceChildren(errorBox(e));
      button.disabled = false;
      button.focus();
    }
  });
  return button;
}

/** An answer, or why there is none (shown in its own section, the rest of the page still drawn). */
type Read<T> = { ok: true; value: T } | { ok: false; error: unknown };
const read = <T>(p: Promise<T>): Promise<Read<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

export interface OrganizationReads {
  report: Read<ChallengerReport>;
  audit: Read<ModelAudit>;
  /** Members' names by user id (empty when they could not be read: the ids are shown instead). */
  who: Map<string, string>;
}

export async function readOrganization(org: Organization): Promise<OrganizationReads> {
  const path = `/api/organizations/${encodeURIComponent(org.id)}`;
  const [report, audit, members] = await Promise.all([
    read(api<ChallengerReport>(`${path}/challengers/report`)),
    read(api<ModelAudit>(`${path}/models/audit`)),
    read(api<OrganizationWithMembers>(path)),
  ]);
  return { report, audit, who: new Map(members.ok ? members.value.members.map((m) => [m.user_id, m.name ?? m.email ?? m.user_id]) : []) };
}

export function organizationSections(ctx: ModelsContext, org: Organization, reads: OrganizationReads): HTMLElement[] {
  return [challengersSection(ctx, org, reads.report), historySection(ctx, org, reads.audit, reads.who)];
}

type Verdict = ChallengerReport['challengers'][number]['weeks'][number]['verdict'];
/** Every verdict the service gives, in words (a Record over the type: a new one fails the typecheck until worded here). */
const VERDICT_WORDS: Record<Verdict, { long: string; short: string }> = {
  better: { long: 'Better than the active model', short: 'better' },
  no_difference: { long: 'No clear difference from the active model', short: 'no clear difference' },
  worse: { long: 'Worse than the active model', short: 'worse' },
};

type Comparison = NonNullable<ChallengerReport['challengers'][number]['overall']>;
type Figure = NonNullable<Comparison['average_precision']>;

const days = (d: number) => `${Number.isInteger(d) ? d : d.toFixed(1)} day${d === 1 ? '' : 's'}`;
const count = (n: number) => n.toLocaleString('en');
/** A figure's number: three decimals (as the Evaluation page) or an amount (as Transactions); "—" when not defined. */
const figureText = (x: number | null, amount: boolean) => (x === null ? '—' : amount ? money(x) : num(x)).replace(/^-(0[.,0]*)$/, '$1');
/** A difference with a sign, and its 95 % interval in brackets. */
function difference(d: Figure['difference'], amount: boolean): string {
  const value = figureText(d.value, amount);
  const signed = d.value !== null && d.value > 0 && /[1-9]/.test(value) ? `+${value}` : value;
  return `${signed} [${figureText(d.low, amount)}, ${figureText(d.high, amount)}]`;
}
const FAVOURS: Record<NonNullable<Figure['favours']> | 'none', string> = {
  challenger: 'the challenger',
  active: 'the active model',
  none: 'neither: no clear difference',
};

function challengersSection(ctx: ModelsContext, org: Organization, report: Read<ChallengerReport>): HTMLElement {
  const key = `challengers-${idKey(org.id)}`;
  const section = (...body: (HTMLElement | null)[]) =>
    h(
      'section',
      { class: 'card challengers', id: key, 'aria-labelledby': `${key}-title` },
      h('h2', { id: `${key}-title` }, `Challengers in ${org.name}`),
      ...body,
    );
  if (!report.ok) return section(errorBox(report.error));
  const r = report.value;
  const delay = days(r.label_delay_days);
  const scope = h(
    'p',
    { id: `${key}-scope` },
    `The report covers the payments scored with ${org.name}'s API keys from ${utc(r.evaluated_from)} to ${utc(r.evaluated_until)} that a challenger also scored in shadow: only payments older than the label delay of ${delay} count, with the outcomes known now (a fraud not reported by then counts as legitimate). Each challenger is compared with the model that answered, every difference with its 95 % paired bootstrap interval.`,
  );
  if (r.challengers.length === 0) {
    const current = ctx.custom.filter((m) => m.organization_id === org.id && m.challenger);
    const ours = ctx.custom.filter((m) => m.organization_id === org.id);
    const empty = current.length
      ? `${current.map((m) => ctx.modelName(m.id)).join(', ')} ${current.length === 1 ? 'is a challenger' : 'are challengers'}, but no payment scored in shadow is older than the label delay (${delay}) yet: the report fills in as they age.`
      : `No challenger has scored a payment here yet. To start, an owner makes a custom model a challenger (“Make challenger” on its card above); from then on every payment scored with ${org.name}'s API keys is also scored by it in shadow, never answered, and it is compared here once those payments are older than the label delay (${delay}).${ours.length ? '' : " The organization has no custom model yet: they are made on the server's command line (npm run model:create, or npm run train -- --organization ORG_ID from its own outcomes)."}`;
    return section(h('p', { id: `${key}-empty`, class: 'model-report-empty' }, empty), scope);
  }
  return section(
    scope,
    h(
      'p',
      { class: 'muted', id: `${key}-caveat` },
      'Caveat: these outcomes were shaped by the model that decided, since a payment it blocked rarely gets a chargeback, so a challenger that would have approved such a payment looks better than it is (docs/model.md, “Challengers”).',
    ),
    ...r.challengers.map((c) => challengerReport(ctx, key, c)),
  );
}

function challengerReport(ctx: ModelsContext, sectionKey: string, c: ChallengerReport['challengers'][number]): HTMLElement {
  const key = `${sectionKey}-${idKey(c.model_id)}`;
  const now = ctx.custom.find((m) => m.id === c.model_id);
  const standing = now?.active ? 'Now the active model' : now?.challenger ? 'Challenging now' : 'No longer a challenger';
  const answered = c.active_model_ids.map((id) => ctx.modelName(id)).join(' and ');
  const o = c.overall;
  return h(
    'article',
    { class: 'challenger-report', id: key, 'aria-labelledby': `${key}-title` },
    h('h3', { id: `${key}-title` }, ctx.modelName(c.model_id)),
    h(
      'p',
      { class: 'muted' },
      answered ? `${standing} · compared with ${answered}, which answered while it scored in shadow.` : `${standing} · not compared on live traffic yet.`,
    ),
    ...(o ? overall(key, o) : [h('p', {}, 'None of the payments it scored is older than the label delay yet.')]),
    c.weeks.length
      ? h(
          'div',
          { id: `${key}-weeks`, class: 'model-report-part' },
          h('h4', {}, 'Week by week'),
          table(
            ['Week', 'Transactions', 'Frauds', 'Verdict', 'AP difference [95 % interval]'],
            c.weeks.map((w) => [
              w.week,
              count(w.transactions),
              count(w.frauds),
              VERDICT_WORDS[w.verdict].short,
              w.average_precision ? difference(w.average_precision.difference, false) : '— (no fraud)',
            ]),
            'Each ISO week (Monday to Sunday, UTC) on its own; with few frauds a week’s intervals are wide',
          ),
        )
      : null,
    c.backtest ? backtest(ctx, key, c.backtest) : null,
  );
}

type Backtest = NonNullable<ChallengerReport['challengers'][number]['backtest']>;

/** The backtest over the imported span, apart from the live comparison and labelled as what it is. */
function backtest(ctx: ModelsContext, challengerKey: string, b: Backtest): HTMLElement {
  const key = `${challengerKey}-backtest`;
  return h(
    'div',
    { id: key, class: 'model-report-part backtest', role: 'group', 'aria-labelledby': `${key}-title` },
    h('h4', { id: `${key}-title` }, 'Backtest over imported history (not live traffic)'),
    h(
      'p',
      { id: `${key}-scope` },
      `The ${count(b.transactions)} most recent imported transactions older than the label delay, from ${utc(b.from)} to ${utc(b.to)}${b.limited ? ` (at most ${count(b.row_limit)}: older ones left out)` : ''}, scored now by this challenger and by ${ctx.modelName(b.active_model_id)}, which answers live traffic, with the ${b.mode.replace('_', ' ')} thresholds.`,
    ),
    h('p', { class: 'muted', id: `${key}-caveat` }, b.note),
    ...overall(key, b.comparison, 'Figures over the imported span'),
  );
}

function overall(key: string, o: Comparison, title = 'Overall figures'): HTMLElement[] {
  const k = o.card_precision_at_k?.k ?? 100;
  const figures: [string, Figure | null, boolean][] = [
    ['Average precision (AP)', o.average_precision, false],
    ['ROC AUC', o.roc_auc, false],
    [`Card precision@${k}`, o.card_precision_at_k, false],
    ['Calibration error (lower is better)', o.calibration_error, false],
    ['Fraud blocked (amount)', o.money.fraud_blocked, true],
    ['Legitimate blocked (amount, lower is better)', o.money.legit_blocked, true],
  ];
  const changed = o.decisions_changed;
  return [
    h(
      'p',
      { class: `verdict verdict-${o.verdict}`, id: `${key}-verdict` },
      h('strong', {}, VERDICT_WORDS[o.verdict].long),
      ` over ${count(o.transactions)} transactions (${count(o.frauds)} fraud).`,
    ),
    h(
      'div',
      { class: 'model-report-part' },
      h('h4', { id: `${key}-evidence-title` }, 'Evidence'),
      h('ul', { class: 'evidence', id: `${key}-evidence`, 'aria-labelledby': `${key}-evidence-title` }, ...o.evidence.map((e) => h('li', {}, e))),
    ),
    h(
      'div',
      { id: `${key}-figures`, class: 'model-report-part' },
      h('h4', {}, title),
      table(
        ['Figure', 'Active model', 'Challenger', 'Difference [95 % interval]', 'Favours'],
        figures.map(([name, f, amount]) =>
          f
            ? [name, figureText(f.active.value, amount), figureText(f.challenger.value, amount), difference(f.difference, amount), FAVOURS[f.favours ?? 'none']]
            : [name, '—', '—', 'not defined: no fraud', '—'],
        ),
        'Active model and challenger on the same payments; the difference is the challenger’s minus the active model’s; amounts in the transactions’ currency units',
      ),
    ),
    h(
      'div',
      { id: `${key}-changes`, class: 'model-report-part' },
      h('h4', {}, 'Decisions that would change'),
      h(
        'p',
        { id: `${key}-changes-count` },
        changed.count === 0
          ? `None of the ${count(o.transactions)} decisions would change.`
          : `${count(changed.count)} of ${count(o.transactions)} decisions (${pct(changed.share)}) would change with the challenger deciding.`,
      ),
      changed.count
        ? table(
            ['Change (active → challenger)', 'Transactions'],
            Object.entries(changed.by_change)
              .sort((a, b) => b[1] - a[1])
              .map(([change, n]) => [change.replace('->', ' → '), count(n)]),
            'By change',
          )
        : null,
    ),
  ];
}

type AuditEntry = ModelAudit['data'][number];
/** Every audited action in words (a Record over the type), with the model it is about and what followed. */
const ACTIONS: Record<AuditEntry['action'], (e: AuditEntry, name: (id: string | null) => string) => [string, string, string]> = {
  promoted: (e, name) => ['Promoted', name(e.model_id), `in place of ${name(e.previous_model_id)}`],
  rolled_back: (e, name) => ['Rolled back', name(e.previous_model_id), `${name(e.model_id)} decides again`],
  deactivated: (e, name) => ['Deactivated', name(e.previous_model_id), `${name(null)} decides again`],
  challenger_added: (e, name) => ['Made a challenger', name(e.model_id), 'scores in shadow'],
  challenger_removed: (e, name) => ['Stopped challenging', name(e.model_id), '—'],
};

function historySection(ctx: ModelsContext, org: Organization, audit: Read<ModelAudit>, who: Map<string, string>): HTMLElement {
  const key = `history-${idKey(org.id)}`;
  const status = statusLine(ctx, key);
  const rollback =
    org.role === 'owner'
      ? actionButton(ctx, {
          id: `rollback-${idKey(org.id)}`,
          label: 'Roll back the last promotion',
          secondary: true,
          describedBy: `${key}-rollback-note`,
          confirm: `Roll back the last promotion in ${org.name}? The model active before it decides again from the next request.`,
          at: key,
          status,
          run: async () => {
            const back = await api<RollBack>(`/api/organizations/${encodeURIComponent(org.id)}/models/rollback`, { method: 'POST' });
            return {
              text: `Rolled back ${ctx.modelName(back.previous_model_id)}: ${ctx.modelName(back.model_id)} decides ${org.name}'s payments again from the next request.`,
              focus: `${key}-title`,
            };
          },
        })
      : null;
  const name = (id: string | null) => ctx.modelName(id);
  return h(
    'section',
    { class: 'card model-history', id: key, 'aria-labelledby': `${key}-title` },
    h('h2', { id: `${key}-title`, tabindex: '-1' }, `Model history of ${org.name}`),
    rollback
      ? h(
          'div',
          { class: 'actions' },
          rollback,
          h('span', { class: 'muted', id: `${key}-rollback-note` }, 'Undoes the newest promotion not undone yet: the model active before it decides again.'),
        )
      : null,
    status,
    !audit.ok
      ? errorBox(audit.error)
      : audit.value.data.length === 0
        ? h('p', { id: `${key}-empty` }, 'No promotion, rollback or challenger change yet.')
        : table(
            ['When (UTC)', 'Who', 'Action', 'Model', 'Then'],
            audit.value.data.map((e) => [utc(e.at), who.get(e.by) ?? e.by, ...ACTIONS[e.action](e, name)]),
            'Promotions, rollbacks, deactivations and challenger changes, newest first',
          ),
  );
}
