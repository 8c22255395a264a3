// Score: a form for one transaction and a mode, and the whole answer of POST /api/risk/score (a
// what-if against the public sandbox, the built-in example history, which records nothing: the page
// says so above the form): the
// calibrated score, band and decision, each channel's score and attribution as bars, the reasons
// (contributions, never causes), entity history, graph evidence, the related ring, the stages
// actually run with their timings, and notes.

import { api } from '../api.ts';
import { bar, errorBox, h, pct, table } from '../dom.ts';

interface ScoreResult {
  transaction_id: string;
  risk_score: number;
  risk_band: string;
  decision: string;
  mode: string;
  model_id: string;
  model_version: string;
  path: string;
  review_threshold: number;
  block_threshold: number;
  channel_scores: Record<string, number>;
  channel_attribution: Record<string, number>;
  reasons: { text: string; direction: string; contribution: number; feature: string }[];
  entity_history: Record<string, { role: string; prior_transactions: number; is_new: boolean }>;
  graph_evidence: Record<string, { transaction_id: string; time: string; amount: number; source: string; target: string; relation: string; outcome: string }[]>;
  related_ring: { ring_id: string; window_start: string; window_end: string; matched_entity: string; role: string; members: number; fraud_rate: number } | null;
  stages: { name: string; ms: number }[];
  latency_ms: number;
  notes: string[];
}

function field(label: string, input: HTMLInputElement | HTMLSelectElement): HTMLElement {
  return h('label', { class: 'field' }, h('span', {}, label), input);
}

export function scorePage(root: HTMLElement): void {
  const input = (name: string, attrs: Record<string, string | boolean> = {}) => h('input', { name, id: `score-${name}`, ...attrs });
  const mode = h('select', { name: 'mode', id: 'score-mode' }, ...['balanced', 'high_precision', 'high_recall'].map((m) => h('option', { value: m }, m.replace('_', ' '))));
  const explain = h('input', { type: 'checkbox', name: 'explain', id: 'score-explain', checked: true });
  const form = h(
    'form',
    { class: 'card form', 'aria-label': 'Transaction to score' },
    h('h2', {}, 'Score a transaction'),
    h(
      'p',
      { class: 'muted', id: 'score-sandbox' },
      'What-if scoring: the transaction is scored against the public sandbox, the built-in example history as it stood at its last transaction, and nothing is recorded. The same transaction always gets the same answer. Your organization scores against its own history with an API key.',
    ),
    h(
      'div',
      { class: 'grid' },
      field('Amount', input('amount', { type: 'number', step: '0.01', min: '0', required: true, value: '120' })),
      field('Customer id', input('customer_id', { required: true, value: 'C000010', autocomplete: 'off' })),
      field('Merchant id', input('merchant_id', { required: true, value: 'M00010', autocomplete: 'off' })),
      field('Location (optional)', input('location', { value: 'Lisbon' })),
      field('Payment type (optional)', input('payment_type', { value: 'wallet' })),
      field('Transaction id (optional)', input('transaction_id', { autocomplete: 'off' })),
      field('Mode', mode),
    ),
    h('label', { class: 'check' }, explain, ' Explain (reasons)'),
    h('button', { type: 'submit' }, 'Score'),
  );
  const out = h('section', { id: 'score-result', 'aria-live': 'polite' });
  root.replaceChildren(form, out);

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const text = (k: string) => String(data.get(k) ?? '').trim();
    const body: Record<string, unknown> = { amount: Number(text('amount')), customer_id: text('customer_id'), merchant_id: text('merchant_id'), mode: text('mode'), explain: explain.checked };
    for (const k of ['location', 'payment_type', 'transaction_id']) if (text(k)) body[k] = text(k);
    out.replaceChildren(h('p', { class: 'muted' }, 'Scoring…'));
    try {
      out.replaceChildren(render(await api<ScoreResult>('/api/risk/score', { method: 'POST', body })));
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  });
}

function render(r: ScoreResult): HTMLElement {
  const channels = Object.keys(r.channel_scores);
  return h(
    'div',
    { class: 'result' },
    h(
      'div',
      { class: 'card summary' },
      h('div', { class: 'big' }, h('span', { class: 'score', id: 'risk-score' }, pct(r.risk_score, 2)), h('span', { class: `badge band-${r.risk_band}` }, r.risk_band), h('span', { class: `badge decision-${r.decision}`, id: 'decision' }, r.decision)),
      h('p', { class: 'muted' }, `Mode ${r.mode}: review at ${pct(r.review_threshold)}, block at ${pct(r.block_threshold)} · path ${r.path} · model ${r.model_id} (${r.model_version}) · ${r.latency_ms.toFixed(3)} ms · ${r.transaction_id}`),
    ),
    h('div', { class: 'card' }, h('h3', {}, 'Channel scores'), h('p', { class: 'muted' }, "Each channel's evidence alone, the others at their average."), ...channels.map((c) => bar(c, r.channel_scores[c]!))),
    h('div', { class: 'card' }, h('h3', {}, 'Channel attribution'), h('p', { class: 'muted' }, 'Signed share of how far the log-odds moved from the average.'), ...channels.map((c) => bar(c, r.channel_attribution[c]!, true))),
    h(
      'div',
      { class: 'card' },
      h('h3', {}, 'Reasons'),
      r.reasons.length === 0
        ? h('p', { class: 'muted' }, 'No reasons: explanations were off.')
        : h('ol', { id: 'reasons', class: 'reasons' }, ...r.reasons.map((x) => h('li', { class: x.direction }, h('span', {}, x.text), h('code', {}, x.feature)))),
    ),
    h(
      'div',
      { class: 'card' },
      h('h3', {}, 'Entity history'),
      table(['Entity', 'Role', 'Earlier transactions', 'New'], Object.entries(r.entity_history).map(([k, v]) => [k, v.role, String(v.prior_transactions), v.is_new ? 'yes' : 'no'])),
    ),
    h(
      'div',
      { class: 'card' },
      h('h3', {}, 'Graph evidence'),
      Object.keys(r.graph_evidence).length === 0
        ? h('p', { class: 'muted' }, 'Nothing earlier shared a detail with this transaction.')
        : h('div', {}, ...Object.entries(r.graph_evidence).map(([k, list]) => h('div', {}, h('h4', {}, k), table(['Time', 'Amount', 'Customer', 'Merchant', 'Relation', 'Outcome'], list.map((e) => [e.time.replace('T', ' ').replace('Z', ''), e.amount.toFixed(2), e.source, e.target, e.relation, e.outcome]))))),
    ),
    h(
      'div',
      { class: 'card' },
      h('h3', {}, 'Related ring'),
      r.related_ring
        ? h('p', {}, `${r.related_ring.matched_entity} (${r.related_ring.role}) belongs to flagged group ${r.related_ring.ring_id} of ${r.related_ring.members} members, fraud rate ${pct(r.related_ring.fraud_rate)}, window ${r.related_ring.window_start.slice(0, 10)} to ${r.related_ring.window_end.slice(0, 10)}. This is not ring membership of the payment itself.`)
        : h('p', { class: 'muted' }, 'None: neither the merchant nor the channel is in a flagged group.'),
    ),
    h('div', { class: 'card' }, h('h3', {}, 'Stages'), table(['Stage', 'ms'], r.stages.map((s) => [s.name, s.ms.toFixed(3)]))),
    r.notes.length ? h('div', { class: 'card' }, h('h3', {}, 'Notes'), h('ul', {}, ...r.notes.map((n) => h('li', {}, n)))) : null,
  );
}
