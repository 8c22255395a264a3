// Models: the built-in model and, signed in, my organizations' custom models, each with its stack
// weights and thresholds per mode; owners activate or deactivate a custom model for their
// organization (its API keys then score with it).

import { api } from '../api.ts';
import { errorBox, h, num, pct, table } from '../dom.ts';

type Rec = Record<string, any>;

export async function modelsPage(root: HTMLElement): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading the models…'));
  try {
    const { models } = await api<{ models: Rec[] }>('/api/models');
    const details = await Promise.all(models.map((m) => api(`/api/models/${m.id}`)));
    root.replaceChildren(
      h('h2', {}, 'Models'),
      h('p', { class: 'muted' }, "Custom models are made on the server's command line (npm run model:create) and belong to an organization; sign in to see yours."),
      ...details.map((m) => card(root, m)),
    );
  } catch (e) {
    root.replaceChildren(errorBox(e));
  }
}

function card(root: HTMLElement, m: Rec): HTMLElement {
  const weights = m.stack.weights as Record<string, number>;
  const thresholds = m.thresholds as Record<string, { review: number; block: number }>;
  const action = m.kind === 'custom' ? h('button', { type: 'button', class: 'secondary', 'data-model': m.id }, m.active ? 'Deactivate' : 'Activate') : null;
  action?.addEventListener('click', async () => {
    try {
      await api(`/api/models/${m.id}/${m.active ? 'deactivate' : 'activate'}`, { method: 'POST' });
      await modelsPage(root);
    } catch (e) {
      action.replaceWith(errorBox(e));
    }
  });
  return h(
    'div',
    { class: 'card model', 'data-kind': m.kind },
    h('h3', {}, m.kind === 'custom' ? `${m.name} (${m.id})` : `${m.id} (built-in)`),
    h('p', { class: 'muted' }, m.kind === 'custom' ? `Organization ${m.organization_id} · ${m.active ? 'active: its API keys score with it' : 'not active'} · made from ${m.base_model_id}` : `Version ${m.version} · trained on ${m.trained_on} (${Number(m.rows).toLocaleString('en')} rows)`),
    table(['Channel', 'Stack weight'], Object.entries(weights).map(([c, w]) => [c, num(w)])),
    table(['Mode', 'Review at', 'Block at'], Object.entries(thresholds).map(([mode, t]) => [mode, pct(t.review), pct(t.block)])),
    action,
  );
}
