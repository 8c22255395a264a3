// Models: the built-in model and, signed in, my organizations' custom models, each with its stack
// weights and its thresholds per mode as two titled tables (they answer different questions: how
// the channels are combined, and where the combined score decides); owners activate or deactivate a
// custom model for their organization (its API keys then score with it).

import { api } from '../api.ts';
import type { CustomModelSummary, ModelDetail, ModelList } from '../contract.ts';
import { errorBox, h, num, pct, table } from '../dom.ts';
import './pages.css';

export async function modelsPage(root: HTMLElement): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading the models…'));
  try {
    const { models } = await api<ModelList>('/api/models');
    const details = await Promise.all(models.map((m) => api<ModelDetail>(`/api/models/${m.id}`)));
    root.replaceChildren(
      h('h1', { class: 'page-title' }, 'Models'),
      h('p', { class: 'muted' }, "Custom models are made on the server's command line (npm run model:create) and belong to an organization; sign in to see yours."),
      ...details.map((m) => card(root, m)),
    );
  } catch (e) {
    root.replaceChildren(errorBox(e));
  }
}

function card(root: HTMLElement, m: ModelDetail): HTMLElement {
  const weights: Record<string, number> = m.stack.weights;
  const thresholds: Record<string, { review: number; block: number }> = m.thresholds;
  const action = m.kind === 'custom' ? h('button', { type: 'button', class: 'secondary', 'data-model': m.id }, m.active ? 'Deactivate' : 'Activate') : null;
  action?.addEventListener('click', async () => {
    try {
      await api<CustomModelSummary>(`/api/models/${m.id}/${m.active ? 'deactivate' : 'activate'}`, { method: 'POST' });
      await modelsPage(root);
    } catch (e) {
      action.replaceWith(errorBox(e));
    }
  });
  const key = m.id.replace(/[^\w-]/g, '_');
  const section = (id: string, title: string, note: string, body: HTMLElement) =>
    h('section', { class: 'model-table', 'aria-labelledby': `${key}-${id}` }, h('h3', { id: `${key}-${id}` }, title), h('p', { class: 'muted' }, note), body);
  return h(
    'div',
    { class: 'card model', 'data-kind': m.kind },
    h('h2', { class: 'card-title' }, m.kind === 'custom' ? `${m.name} (${m.id})` : `${m.id} (built-in)`),
    h('p', { class: 'muted' }, m.kind === 'custom' ? `Organization ${m.organization_id} · ${m.active ? 'active: its API keys score with it' : 'not active'} · made from ${m.base_model_id}` : `Version ${m.version} · trained on ${m.trained_on} (${Number(m.rows).toLocaleString('en')} rows)`),
    h(
      'div',
      { class: 'model-tables' },
      section('weights', 'Stack weights', `How the channels are combined: log-odds = ${num(m.stack.bias)} + the sum of each weight times its channel's raw score.`, table(['Channel', 'Stack weight'], Object.entries(weights).map(([c, w]) => [c, num(w)]))),
      section('thresholds', 'Thresholds per mode', 'Where the combined score decides: at or above “review at” a payment is sent to review, at or above “block at” it is blocked.', table(['Mode', 'Review at', 'Block at'], Object.entries(thresholds).map(([mode, t]) => [mode.replaceAll('_', ' '), pct(t.review), pct(t.block)]))),
    ),
    action,
  );
}
