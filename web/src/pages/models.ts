// Models: the built-in model and, signed in, my organizations' custom models, each with its stack
// weights and its thresholds per mode as two titled tables (they answer different questions: how
// the channels are combined, and where the combined score decides). A custom model says whether it
// is active (it decides its organization's payments), a challenger (scored in shadow, never
// answered) or neither; owners of its organization make it a challenger or stop it, promote it
// (activate: it decides from the next request) or deactivate it. Below, per organization, the
// challengers' report and the model history, where owners roll back the last promotion
// (pages/challengers.ts), then training from the organization's own data, where owners check what
// the command line would train on (pages/training-plan.ts).

import { api } from '../api.ts';
import type { CustomModelSummary, Me, ModelDetail, ModelList, Organization, OrganizationList } from '../contract.ts';
import { errorBox, h, num, pct, table, utc } from '../dom.ts';
import { actionButton, idKey, organizationSections, readOrganization, statusLine, type ModelsContext, type Shown } from './challengers.ts';
import { trainingSection } from './training-plan.ts';
import './pages.css';

export async function modelsPage(root: HTMLElement): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading the models…'));
  try {
    await draw(root, {});
  } catch (e) {
    root.replaceChildren(h('h1', { class: 'page-title' }, 'Models'), errorBox(e));
  }
}

/** Reads everything the page shows, then replaces what it showed (nothing is blanked meanwhile,
 *  so an action's button keeps its place until the page is drawn again). */
async function draw(root: HTMLElement, shown: Shown): Promise<void> {
  const me = await api<Me>('/api/auth/me');
  const [{ models }, { organizations }] = await Promise.all([
    api<ModelList>('/api/models'),
    me.authenticated ? api<OrganizationList>('/api/organizations') : Promise.resolve<OrganizationList>({ organizations: [] }),
  ]);
  const [details, reads] = await Promise.all([
    Promise.all(models.map((m) => api<ModelDetail>(`/api/models/${encodeURIComponent(m.id)}`))),
    Promise.all(organizations.map(readOrganization)),
  ]);
  const custom = models.filter((m): m is CustomModelSummary => m.kind === 'custom');
  const builtIn = models.find((m) => m.kind === 'built_in')?.id;
  const ctx: ModelsContext = {
    custom,
    shown,
    modelName(id) {
      if (id === null || id === builtIn) return id === null ? 'the built-in model' : `the built-in model (${id})`;
      const m = custom.find((c) => c.id === id);
      return m ? `${m.name} (${m.id})` : id;
    },
    async again(next) {
      await draw(root, next);
      if (next.focus) document.getElementById(next.focus)?.focus();
    },
  };
  root.replaceChildren(
    h('h1', { class: 'page-title' }, 'Models'),
    h(
      'p',
      { class: 'muted' },
      "Custom models are made on the server's command line (npm run model:create, or npm run train -- --organization ORG_ID from the organization's own outcomes) and belong to an organization; sign in to see yours. An organization's active model decides its payments; a challenger is scored in shadow beside it and compared on the organization's own outcomes below.",
    ),
    ...details.map((m) => card(ctx, m, organizations)),
    ...organizations.flatMap((o, i) => [...organizationSections(ctx, o, reads[i]!), trainingSection(o)]),
  );
}

function card(ctx: ModelsContext, m: ModelDetail, organizations: Organization[]): HTMLElement {
  const weights: Record<string, number> = m.stack.weights;
  const thresholds: Record<string, { review: number; block: number }> = m.thresholds;
  const key = idKey(m.id);
  const section = (id: string, title: string, note: string, body: HTMLElement) =>
    h('section', { class: 'model-table', 'aria-labelledby': `${key}-${id}` }, h('h3', { id: `${key}-${id}` }, title), h('p', { class: 'muted' }, note), body);
  const org = m.kind === 'custom' ? organizations.find((o) => o.id === m.organization_id) : undefined;
  return h(
    'div',
    { class: 'card model', 'data-kind': m.kind, 'data-model': m.id, id: `model-${key}` },
    h('h2', { class: 'card-title', id: `model-${key}-title`, tabindex: '-1' }, m.kind === 'custom' ? `${m.name} (${m.id})` : `${m.id} (built-in)`),
    h(
      'p',
      { class: 'muted' },
      m.kind === 'custom'
        ? `Organization ${org?.name ?? m.organization_id} · made from ${m.base_model_id}${m.boosters === 'own' ? " with trees added to its boosters, learned from the organization's outcomes" : ''} · created ${utc(m.created_at)}`
        : `Version ${m.version} · trained on ${m.trained_on} (${Number(m.rows).toLocaleString('en')} rows)`,
    ),
    m.kind === 'custom' ? customState(ctx, m, org) : null,
    h(
      'div',
      { class: 'model-tables' },
      section(
        'weights',
        'Stack weights',
        `How the channels are combined: log-odds = ${num(m.stack.bias)} + the sum of each weight times its channel's raw score.`,
        table(
          ['Channel', 'Stack weight'],
          Object.entries(weights).map(([c, w]) => [c, num(w)]),
        ),
      ),
      section(
        'thresholds',
        'Thresholds per mode',
        'Where the combined score decides: at or above “review at” a payment is sent to review, at or above “block at” it is blocked.',
        table(
          ['Mode', 'Review at', 'Block at'],
          Object.entries(thresholds).map(([mode, t]) => [mode.replaceAll('_', ' '), pct(t.review), pct(t.block)]),
        ),
      ),
    ),
  );
}

/** A custom model's standing in its organization and, for its owners, the actions on it. */
function customState(ctx: ModelsContext, m: CustomModelSummary, org: Organization | undefined): HTMLElement {
  const key = `model-${idKey(m.id)}`;
  const orgName = org?.name ?? m.organization_id;
  const [label, words] = m.active
    ? ['Active', `it decides the payments scored with ${orgName}'s API keys${m.activated_at ? ` (promoted ${utc(m.activated_at)})` : ''}.`]
    : m.challenger
      ? ['Challenger', 'it scores every payment of its organization in shadow: recorded with the transaction, never answered, compared below.']
      : ['Candidate', 'neither active nor a challenger.'];
  const state = h('p', { class: 'model-state', id: `${key}-state` }, h('strong', { class: `model-badge model-${label.toLowerCase()}` }, label), `: ${words}`);
  if (org?.role !== 'owner')
    return h('div', {}, state, org ? h('p', { class: 'muted' }, `Only owners of ${orgName} make a model a challenger, promote or deactivate it.`) : null);
  const status = statusLine(ctx, key);
  const current = ctx.custom.find((c) => c.organization_id === m.organization_id && c.active);
  const path = `/api/models/${encodeURIComponent(m.id)}`;
  const common = { at: key, status, describedBy: `${key}-title` };
  const buttons = m.active
    ? [
        actionButton(ctx, {
          ...common,
          id: `${key}-deactivate`,
          label: 'Deactivate',
          secondary: true,
          run: async () => {
            await api<CustomModelSummary>(`${path}/deactivate`, { method: 'POST' });
            return { text: `Deactivated ${m.name}: the built-in model decides ${orgName}'s payments again.`, focus: `${key}-promote` };
          },
        }),
      ]
    : [
        actionButton(ctx, {
          ...common,
          id: `${key}-challenger`,
          label: m.challenger ? 'Stop challenging' : 'Make challenger',
          secondary: true,
          run: async () => {
            await api<CustomModelSummary>(`${path}/challenger`, { method: m.challenger ? 'DELETE' : 'POST' });
            return {
              text: m.challenger
                ? `${m.name} no longer challenges; what it scored so far stays in the report.`
                : `${m.name} is a challenger now: it scores every payment of ${orgName} in shadow, and is compared below once those payments are older than the label delay.`,
              focus: `${key}-challenger`,
            };
          },
        }),
        actionButton(ctx, {
          ...common,
          id: `${key}-promote`,
          label: 'Promote',
          confirm: `Promote ${m.name} in ${orgName}? It decides every payment scored with the organization's API keys from the next request (within a second), in place of ${ctx.modelName(current?.id ?? null)}. “Roll back the last promotion” undoes it.`,
          run: async () => {
            await api<CustomModelSummary>(`${path}/activate`, { method: 'POST' });
            return { text: `Promoted ${m.name}: it decides ${orgName}'s payments from the next request.`, focus: `${key}-title` };
          },
        }),
      ];
  return h('div', {}, state, h('div', { class: 'actions' }, ...buttons), status);
}
