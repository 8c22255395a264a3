// Score: a form for one transaction and a mode, and the whole answer of POST /api/risk/score. It is
// a what-if against the public sandbox (the built-in example history, which records nothing), and
// the page says so first, prominently. Payment type and location are suggested from the values the
// model knows (GET /api/risk/known-values) but any text is allowed, with a note when a value is new
// to the model, because a new value changes the answer (a payment type is then scored as missing, a
// place as new to every customer). The answer: the calibrated score, band and decision, each
// channel's score and attribution as bars with the attribution said in words and why the score can
// exceed every channel score, the reasons (contributions, never causes), entity history, graph
// evidence with times in UTC and amounts in the transaction's currency units, the related ring, the
// stages actually run with their timings, and notes.

import { api } from '../api.ts';
import type { KnownValues, ScoreResponse } from '../contract.ts';
import { bar, errorBox, h, money, pct, table, utc } from '../dom.ts';
import './pages.css';

/** What each channel looks at, for the sentences about attribution. */
const CHANNEL_WORDS: Record<string, { name: string; what: string }> = {
  tabular: { name: 'tabular', what: 'the payment itself: amount, time of day, payment type' },
  behavioral: { name: 'behavioral', what: 'the customer against their own past' },
  velocity: { name: 'velocity', what: 'how much is happening right now' },
  graph: { name: 'graph', what: 'known fraud around the merchant and the channel' },
};
const words = (c: string) => CHANNEL_WORDS[c] ?? { name: c, what: c };

function field(label: string, input: HTMLInputElement | HTMLSelectElement, ...after: HTMLElement[]): HTMLElement {
  return h('label', { class: 'field' }, h('span', {}, label), input, ...after);
}

export function scorePage(root: HTMLElement): void {
  const input = (name: string, attrs: Record<string, string | boolean> = {}) => h('input', { name, id: `score-${name}`, ...attrs });
  const mode = h(
    'select',
    { name: 'mode', id: 'score-mode' },
    ...['balanced', 'high_precision', 'high_recall'].map((m) => h('option', { value: m }, m.replace('_', ' '))),
  );
  const explain = h('input', { type: 'checkbox', name: 'explain', id: 'score-explain', checked: true });
  // Suggestions from the model's known values; the inputs still take any text.
  const paymentTypes = h('datalist', { id: 'score-payment-types' });
  const locations = h('datalist', { id: 'score-locations' });
  const location = input('location', { value: 'Lisbon', list: 'score-locations', autocomplete: 'off', 'aria-describedby': 'score-location-note' });
  const paymentType = input('payment_type', {
    value: 'wallet',
    list: 'score-payment-types',
    autocomplete: 'off',
    'aria-describedby': 'score-payment_type-note',
  });
  const locationNote = h('span', { class: 'field-note', id: 'score-location-note', 'aria-live': 'polite' });
  const paymentNote = h('span', { class: 'field-note', id: 'score-payment_type-note', 'aria-live': 'polite' });
  const asOf = h('span', { id: 'score-as-of' });
  let known: KnownValues | undefined;

  const noteFor = (value: string, list: string[] | undefined, kind: 'location' | 'payment_type'): string => {
    const v = value.trim();
    if (!v)
      return kind === 'location'
        ? 'Empty: recorded as “unknown”, a new place for the customer, which raises the score.'
        : 'Empty: recorded as “unknown”, scored as a missing payment type, which raises the score.';
    if (!list || list.includes(v)) return '';
    return kind === 'location'
      ? `New to the model: “${v}” is not among the places in its data, so it is a new place for every customer and its channel has no history.`
      : `New to the model: “${v}” is not one of its payment types (${list.join(', ')}), so it is scored as missing.`;
  };
  const updateNotes = () => {
    locationNote.textContent = noteFor(location.value, known?.locations, 'location');
    paymentNote.textContent = noteFor(paymentType.value, known?.payment_types, 'payment_type');
    locationNote.classList.toggle('new-value', locationNote.textContent !== '');
    paymentNote.classList.toggle('new-value', paymentNote.textContent !== '');
  };
  location.addEventListener('input', updateNotes);
  paymentType.addEventListener('input', updateNotes);

  const form = h(
    'form',
    { class: 'card form', 'aria-label': 'Transaction to score' },
    h(
      'div',
      { class: 'callout', id: 'score-sandbox', role: 'note' },
      h('strong', {}, 'What-if scoring: '),
      'the transaction is scored against the public sandbox, the built-in example history as it stood at its last transaction, and nothing is recorded. The same transaction always gets the same answer. ',
      asOf,
      'Your organization scores against its own history with an API key.',
    ),
    h(
      'div',
      { class: 'grid' },
      field('Amount (currency units)', input('amount', { type: 'number', step: '0.01', min: '0', required: true, value: '120' })),
      field('Customer id', input('customer_id', { required: true, value: 'C000010', autocomplete: 'off' })),
      field('Merchant id', input('merchant_id', { required: true, value: 'M00010', autocomplete: 'off' })),
      field('Location (pick or type)', location, locations, locationNote),
      field('Payment type (pick or type)', paymentType, paymentTypes, paymentNote),
      field('Transaction id (optional)', input('transaction_id', { autocomplete: 'off' })),
      field('Mode', mode),
    ),
    h('label', { class: 'check' }, explain, ' Explain (reasons)'),
    h('button', { type: 'submit' }, 'Score'),
  );
  const out = h('section', { id: 'score-result', 'aria-live': 'polite' });
  root.replaceChildren(h('h1', { class: 'page-title' }, 'Score a transaction'), form, out);

  void api<KnownValues>('/api/risk/known-values').then(
    (k) => {
      known = k;
      paymentTypes.replaceChildren(...k.payment_types.map((v) => h('option', { value: v })));
      locations.replaceChildren(...k.locations.map((v) => h('option', { value: v })));
      asOf.textContent = `It is scored as of ${utc(k.sandbox_as_of)}, one second after the sandbox's newest transaction. `;
      updateNotes();
    },
    // Without the known values the form still scores; it only cannot suggest or warn.
    () => undefined,
  );

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const text = (k: string) => String(data.get(k) ?? '').trim();
    const body: Record<string, unknown> = {
      amount: Number(text('amount')),
      customer_id: text('customer_id'),
      merchant_id: text('merchant_id'),
      mode: text('mode'),
      explain: explain.checked,
    };
    for (const k of ['location', 'payment_type', 'transaction_id']) if (text(k)) body[k] = text(k);
    out.replaceChildren(h('p', { class: 'muted' }, 'Scoring…'));
    try {
      out.replaceChildren(render(await api<ScoreResponse>('/api/risk/score', { method: 'POST', body }), body.amount as number));
    } catch (e) {
      out.replaceChildren(errorBox(e));
    }
  });
}

/** The attribution in words: which channel pushed the score up most, which pulled it down most. */
export function attributionSentence(attribution: Record<string, number>): string {
  const entries = Object.entries(attribution);
  const share = (v: number) => `${Math.round(Math.abs(v) * 100)} %`;
  const up = entries.filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const down = entries.filter(([, v]) => v < 0).sort((a, b) => a[1] - b[1]);
  if (up.length === 0 && down.length === 0) return 'No channel moved the score from the average.';
  const parts: string[] = [];
  if (up.length > 0) {
    const [c, v] = up[0]!;
    const rest = up.slice(1).map(([c2, v2]) => `${words(c2).name} (${share(v2)})`);
    parts.push(
      `${cap(words(c).name)} evidence (${words(c).what}) pushed the score up most, ${share(v)} of the total movement${rest.length ? `, then ${rest.join(' and ')}` : ''}`,
    );
  } else parts.push('No channel pushed the score up');
  if (down.length > 0) {
    const [c, v] = down[0]!;
    const rest = down.slice(1).map(([c2, v2]) => `${words(c2).name} (${share(v2)})`);
    parts.push(
      `${up.length > 0 ? words(c).name : cap(words(c).name)} evidence (${words(c).what}) pulled it down most, ${share(v)}${rest.length ? `, then ${rest.join(' and ')}` : ''}`,
    );
  } else parts.push('nothing pulled it down');
  return `${parts.join('; ')}.`;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function render(r: ScoreResponse, amount: number): HTMLElement {
  const channels = Object.keys(r.channel_scores) as (keyof ScoreResponse['channel_scores'])[];
  const highest = Math.max(...channels.map((c) => r.channel_scores[c]));
  const above = r.risk_score > highest;
  return h(
    'div',
    { class: 'result' },
    h(
      'div',
      { class: 'card summary' },
      h(
        'div',
        { class: 'big' },
        h('span', { class: 'score', id: 'risk-score' }, pct(r.risk_score, 2)),
        h('span', { class: `badge band-${r.risk_band}` }, r.risk_band),
        h('span', { class: `badge decision-${r.decision}`, id: 'decision' }, r.decision),
      ),
      h('p', { id: 'score-amount-shown' }, `An amount of ${money(amount)} in the transaction's currency units.`),
      h(
        'p',
        { class: 'muted' },
        `Mode ${r.mode}: review at ${pct(r.review_threshold)}, block at ${pct(r.block_threshold)} · path ${r.path} · model ${r.model_id} (${r.model_version}) · ${r.latency_ms.toFixed(3)} ms on the server · ${r.transaction_id}`,
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', { class: 'card-title' }, 'Channel scores'),
      h('p', { class: 'muted' }, "Each channel's evidence alone, the others at their average."),
      ...channels.map((c) => bar(c, r.channel_scores[c])),
      h(
        'p',
        { class: 'explain', id: 'score-combine' },
        above ? `Here the score, ${pct(r.risk_score, 2)}, is above every channel score (the highest is ${pct(highest, 2)}). ` : '',
        "Why the score can exceed every channel score: the stack adds the channels' log-odds together, while each channel score is that channel's evidence alone with the others at their average, so channels that each point up add up to more than any one of them.",
      ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', { class: 'card-title' }, 'Channel attribution'),
      h('p', { class: 'muted' }, 'Signed share of how far the log-odds moved from the average.'),
      ...channels.map((c) => bar(c, r.channel_attribution[c], true)),
      h('p', { class: 'explain', id: 'attribution-summary' }, attributionSentence(r.channel_attribution)),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', { class: 'card-title' }, 'Reasons'),
      r.reasons.length === 0
        ? h('p', { class: 'muted' }, 'No reasons: explanations were off.')
        : h(
            'ol',
            { id: 'reasons', class: 'reasons' },
            ...r.reasons.map((x) => h('li', { class: x.direction }, h('span', {}, x.text), h('code', {}, x.feature))),
          ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', { class: 'card-title' }, 'Entity history'),
      table(
        ['Entity', 'Role', 'Earlier transactions', 'New'],
        Object.entries(r.entity_history).map(([k, v]) => [k, v.role, String(v.prior_transactions), v.is_new ? 'yes' : 'no']),
      ),
    ),
    h(
      'div',
      { class: 'card', id: 'graph-evidence' },
      h('h2', { class: 'card-title' }, 'Graph evidence'),
      Object.keys(r.graph_evidence).length === 0
        ? h('p', { class: 'muted' }, 'Nothing earlier shared a detail with this transaction.')
        : h(
            'div',
            {},
            h('p', { class: 'muted' }, "Times in UTC; amounts in the transaction's currency units."),
            ...Object.entries(r.graph_evidence).map(([k, list]) =>
              h(
                'div',
                {},
                h('h3', { class: 'sub-title' }, k),
                table(
                  ['Time (UTC)', 'Amount (currency units)', 'Customer', 'Merchant', 'Relation', 'Outcome'],
                  list.map((e) => [utc(e.time), money(e.amount), e.source, e.target, e.relation, e.outcome]),
                ),
              ),
            ),
          ),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', { class: 'card-title' }, 'Related ring'),
      r.related_ring
        ? h(
            'p',
            { id: 'related-ring' },
            `${r.related_ring.matched_entity} (${r.related_ring.role}) belongs to flagged group ${r.related_ring.ring_id} of ${r.related_ring.members} members, fraud rate ${pct(r.related_ring.fraud_rate)}, window ${utc(r.related_ring.window_start)} to ${utc(r.related_ring.window_end)}. This is not ring membership of the payment itself.`,
          )
        : h('p', { class: 'muted' }, 'None: neither the merchant nor the channel is in a flagged group.'),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', { class: 'card-title' }, 'Stages'),
      table(
        ['Stage', 'Time (ms)'],
        r.stages.map((s) => [s.name, s.ms.toFixed(3)]),
      ),
    ),
    r.notes.length ? h('div', { class: 'card' }, h('h2', { class: 'card-title' }, 'Notes'), h('ul', {}, ...r.notes.map((n) => h('li', {}, n)))) : null,
  );
}
