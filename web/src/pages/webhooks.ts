// Webhooks: an organization's endpoints, each POSTed the events it subscribes to (docs/integrating.md,
// Webhooks). Every member sees the endpoints (URL, events, status with why it is disabled, the
// secret's rotation), each one's deliveries log (newest first, more on request; a delivery opens
// to its attempts and the event it carries), sends a test event and redelivers. Owners also add
// endpoints and edit, disable or enable, rotate the secret of and delete them; a member gets no
// such control (the service would answer 403). The signing secret, answered once at creation or
// rotation, is shown in that one view and kept nowhere else: not in the address, the tab's
// storage or the next drawing of the page. What an endpoint's URL, its description or a receiver's
// answer holds is only ever set as text (dom.ts). Address: #/webhooks?org=….

import { api } from '../api.ts';
import type {
  Organization,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookEventType,
} from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { organizationFor } from '../org.ts';
import type { Route } from '../route.ts';
import './rules/rules.css';
import './webhooks.css';

/** Every event type the service declares (WEBHOOK_EVENT_TYPES in src/contract/webhooks.ts, which
 *  the browser cannot import), in its order, with what it reports: a Record over the type, so a
 *  type added there fails the dashboard's typecheck until it is described here. */
const EVENT_WORDS: Record<WebhookEventType, string> = {
  'decision.review': 'a payment was scored review',
  'decision.block': 'a payment was scored block',
  'review.decided': 'an analyst reported an outcome from review',
  'outcome.recorded': "a transaction's outcome changed",
  'job.succeeded': 'a scoring job, backtest or history import finished',
  'job.failed': 'a scoring job, backtest or history import failed',
  'drift.verdict_changed': "a week's drift verdict changed",
  'rule.changed': 'a rule was created, changed or deleted',
  'case.opened': 'a case was opened (by a decision or from your server)',
  'case.assigned': "a case's assignee changed",
  'case.closed': 'a case was closed, with its resolution',
  'case.sla_breached': 'a case passed its due time while open or in progress',
};
const EVENT_TYPES = Object.keys(EVENT_WORDS) as WebhookEventType[];

const DISABLED_WORDS: Record<NonNullable<WebhookEndpoint['disabled_reason']>, string> = {
  disabled_by_user: 'Disabled by an owner',
  delivery_failing: 'Disabled by the service: deliveries failed for three days',
  secret_unreadable: 'Disabled by the service: its signing secret cannot be read (rotate it)',
};

/** Deliveries read per page of the log. */
const PAGE = 20;
/** While a delivery due within this many seconds is pending, the log reads itself again each second. */
const FOLLOW_SECONDS = 30;
/** At most this many such readings after each drawing or action, then the Refresh button. */
const FOLLOW_ROUNDS = 60;

/** A secret just answered, for the one drawing that shows it. */
interface NewSecret {
  endpoint: string;
  value: string;
  rotated: boolean;
}

/** What a drawing of the page carries over from the action that led to it. */
interface Shown {
  message?: string;
  secret?: NewSecret;
  /** The element focused once drawn. */
  focus?: string;
}

export async function webhooksPage(root: HTMLElement, route: Route): Promise<void> {
  root.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const chosen = await organizationFor(root, route.query, 'webhooks', 'Webhooks');
    if (!chosen) return;
    await endpointsView(root, chosen.org, chosen.picker);
  } catch (e) {
    root.replaceChildren(h('h1', {}, 'Webhooks'), errorBox(e));
  }
}

const base = (org: Organization) => `/api/organizations/${encodeURIComponent(org.id)}/webhooks`;

/** What an endpoint's card and forms need of the page around them. */
interface Context {
  org: Organization;
  owner: boolean;
  path: string;
  /** Draws the page anew (the secret, if any, shown in that drawing only). */
  again(shown: Shown): Promise<void>;
  /** Shows an error in the page's status line. */
  fail(e: unknown): void;
}

async function endpointsView(root: HTMLElement, org: Organization, picker: HTMLElement | null, shown: Shown = {}): Promise<void> {
  const path = base(org);
  const { data } = await api<WebhookEndpointList>(path);
  const logs = await Promise.all(data.map((e) => api<WebhookDeliveryPage>(`${path}/${encodeURIComponent(e.id)}/deliveries?limit=${PAGE}`)));
  const owner = org.role === 'owner';
  const status = h('div', { id: 'webhook-status', class: 'notice', role: 'status', 'aria-live': 'polite' }, shown.message ?? '');
  const ctx: Context = {
    org,
    owner,
    path,
    fail: (e) => status.replaceChildren(errorBox(e)),
    async again(next) {
      await endpointsView(root, org, picker, next);
      if (next.focus) document.getElementById(next.focus)?.focus();
    },
  };
  root.replaceChildren(
    h('h1', {}, 'Webhooks'),
    h(
      'div',
      { class: 'actions' },
      picker,
      h(
        'p',
        { class: 'muted' },
        `${org.name}: each endpoint is sent a signed POST for every event it subscribes to, in order, retried for three days. Receivers verify the signature with the endpoint's secret (docs/integrating.md, Webhooks).`,
      ),
    ),
    status,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'webhook-list-title' },
      h('h2', { id: 'webhook-list-title', tabindex: '-1' }, `${data.length} endpoint${data.length === 1 ? '' : 's'}`),
      data.length === 0
        ? h(
            'p',
            { class: 'muted', id: 'no-webhooks' },
            owner ? 'No endpoints yet: add one below.' : 'No endpoints yet. An owner of the organization adds them.',
          )
        : null,
      owner
        ? null
        : h(
            'p',
            { class: 'muted', id: 'webhook-member-note' },
            'Only owners add, change, rotate and delete endpoints; as an analyst you can send a test event and redeliver.',
          ),
    ),
    ...data.map((e, i) => endpointCard(ctx, e, logs[i]!, shown.secret?.endpoint === e.id ? shown.secret : undefined)),
    ...(owner ? [createForm(ctx)] : []),
  );
}

/** The URL, events and description fields, for a new endpoint or an existing one's edit. */
function endpointFields(prefix: string, e?: WebhookEndpoint) {
  const url = h('input', {
    id: `${prefix}-url`,
    name: 'url',
    type: 'url',
    required: true,
    maxlength: '2048',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'https://example.com/webhooks',
    value: e?.url,
    'aria-describedby': `${prefix}-url-hint`,
  });
  const description = h('input', {
    id: `${prefix}-description`,
    name: 'description',
    maxlength: '500',
    autocomplete: 'off',
    value: e?.description ?? undefined,
  });
  const boxes = EVENT_TYPES.map((type) =>
    h('input', { type: 'checkbox', name: 'events', value: type, id: `${prefix}-event-${type.replace('.', '-')}`, checked: e?.events.includes(type) }),
  );
  const fields = h(
    'div',
    {},
    h(
      'div',
      { class: 'grid' },
      h(
        'label',
        { class: 'field wide' },
        h('span', {}, 'URL'),
        url,
        h('span', { class: 'field-hint', id: `${prefix}-url-hint` }, 'https, reachable from the service; where every event is POSTed.'),
      ),
      h('label', { class: 'field wide' }, h('span', {}, 'Description (optional)'), description),
    ),
    h(
      'fieldset',
      { class: 'choices', id: `${prefix}-events` },
      h('legend', {}, 'Events to send'),
      h(
        'div',
        { class: 'webhook-event-list' },
        ...EVENT_TYPES.map((type, i) =>
          h('label', { class: 'check' }, boxes[i]!, h('span', {}, h('code', {}, type), h('span', { class: 'field-hint' }, ` ${EVENT_WORDS[type]}`))),
        ),
      ),
    ),
  );
  return {
    fields,
    url,
    /** The fields as the API takes them, or undefined (with the first box focused) when no event is chosen. */
    read(status: HTMLElement): { url: string; events: WebhookEventType[]; description: string } | undefined {
      const events = boxes.filter((b) => b.checked).map((b) => b.value as WebhookEventType);
      if (events.length === 0) {
        status.textContent = 'Choose at least one event to send.';
        boxes[0]!.focus();
        return undefined;
      }
      return { url: url.value.trim(), events, description: description.value.trim() };
    },
  };
}

function createForm(ctx: Context): HTMLElement {
  const f = endpointFields('webhook');
  const status = h('div', { id: 'webhook-create-status', role: 'status', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card form', id: 'webhook-create', 'aria-labelledby': 'webhook-create-title' },
    h('h2', { id: 'webhook-create-title' }, 'New endpoint'),
    f.fields,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'webhook-create-submit' }, 'Add endpoint')),
    status,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = f.read(status);
    if (!body) return;
    try {
      const created = await api<WebhookEndpointWithSecret>(ctx.path, {
        method: 'POST',
        body: { url: body.url, events: body.events, ...(body.description ? { description: body.description } : {}) },
      });
      await ctx.again({
        message: `Added the endpoint ${created.url}.`,
        secret: { endpoint: created.id, value: created.secret, rotated: false },
        focus: 'webhook-secret',
      });
    } catch (e) {
      status.replaceChildren(errorBox(e));
      f.url.focus();
    }
  });
  return form;
}

/** The secret just answered: shown this once, with a copy button. */
function secretBox(e: WebhookEndpoint, secret: NewSecret): HTMLElement {
  const value = h('code', { id: 'webhook-secret-value' }, secret.value);
  const said = h('span', { id: 'webhook-secret-copied', role: 'status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', class: 'secondary', id: 'webhook-secret-copy' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret.value);
      said.textContent = 'Copied.';
    } catch {
      // No clipboard here (permission refused): select it, for the keyboard's copy.
      getSelection()?.selectAllChildren(value);
      said.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy it.';
    }
  });
  const done = h('button', { type: 'button', class: 'secondary', id: 'webhook-secret-done' }, 'I have stored it');
  const box = h(
    'section',
    { class: 'secret webhook-secret', id: 'webhook-secret', tabindex: '-1', 'aria-labelledby': 'webhook-secret-title' },
    h('h3', { id: 'webhook-secret-title' }, secret.rotated ? 'New signing secret' : 'Signing secret'),
    h(
      'p',
      {},
      h('strong', {}, 'Copy it now: it will not be shown again.'),
      ' Your receiver verifies every delivery with it.',
      secret.rotated && e.previous_secret_expires_at
        ? ` The previous secret also signs until ${utc(e.previous_secret_expires_at)}, so switch the receiver before then.`
        : '',
    ),
    h('div', { class: 'actions' }, value, copy, done),
    said,
  );
  done.addEventListener('click', () => {
    box.remove();
    document.getElementById(`webhook-test-${e.id}`)?.focus();
  });
  return box;
}

function statusWords(e: WebhookEndpoint): HTMLElement {
  if (e.status === 'enabled') return h('span', { class: 'webhook-enabled' }, 'Enabled');
  return h(
    'span',
    {},
    h('span', { class: 'webhook-disabled' }, e.disabled_reason ? DISABLED_WORDS[e.disabled_reason] : 'Disabled'),
    e.disabled_at ? ` since ${utc(e.disabled_at)}` : '',
    e.disabled_message ? h('span', { class: 'webhook-disabled-message' }, e.disabled_message) : null,
  );
}

function secretWords(e: WebhookEndpoint): string {
  const rotated = e.secret_rotated_at ? `Rotated ${utc(e.secret_rotated_at)}` : `Made ${utc(e.created_at)}, not rotated`;
  return e.previous_secret_expires_at ? `${rotated}; the previous secret also signs until ${utc(e.previous_secret_expires_at)}` : rotated;
}

function endpointCard(ctx: Context, e: WebhookEndpoint, first: WebhookDeliveryPage, secret: NewSecret | undefined): HTMLElement {
  const at = `${ctx.path}/${encodeURIComponent(e.id)}`;
  const log = deliveriesLog(ctx, e, first);
  const test = h('button', { type: 'button', id: `webhook-test-${e.id}` }, 'Send test event');
  test.addEventListener('click', async () => {
    test.disabled = true;
    try {
      const queued = await api<{ delivery_id: WebhookDelivery['id'] }>(`${at}/test`, { method: 'POST' });
      await log.refresh(
        `A test event is queued${e.status === 'disabled' ? ': it goes out once the endpoint is enabled' : ''} (delivery ${queued.delivery_id}).`,
      );
    } catch (err) {
      log.fail(err);
    } finally {
      test.disabled = false;
    }
  });
  const parts: (Node | null)[] = [
    h('h2', { class: 'webhook-url', id: `webhook-title-${e.id}` }, e.url),
    secret ? secretBox(e, secret) : null,
    h(
      'dl',
      { class: 'kv' },
      ...[
        ['Events', h('span', { class: 'webhook-event-names' }, ...e.events.flatMap((type, i) => [i ? ', ' : '', h('code', {}, type)]))],
        ['Description', e.description ?? '—'],
        ['Status', h('span', { id: `webhook-state-${e.id}` }, statusWords(e))],
        ['Created', `${utc(e.created_at)} by ${e.created_by}`],
        ['Signing secret', h('span', { id: `webhook-secret-state-${e.id}` }, secretWords(e))],
      ].flatMap(([k, v]) => [h('dt', {}, k as string), h('dd', {}, v as string | Node)]),
    ),
  ];
  const actions = h('div', { class: 'actions', role: 'group', 'aria-label': `Actions on ${e.url}` }, test);
  if (ctx.owner) {
    const edit = editForm(ctx, e, at);
    actions.append(...ownerButtons(ctx, e, at, edit));
    parts.push(actions, edit.form);
  } else parts.push(actions);
  parts.push(log.section);
  return h(
    'section',
    { class: 'card webhook', id: `webhook-${e.id}`, 'data-endpoint': e.id, 'aria-labelledby': `webhook-title-${e.id}` },
    ...parts.filter((p): p is Node => p !== null),
  );
}

/** Enable or disable, edit, rotate the secret, delete: owners only. */
function ownerButtons(ctx: Context, e: WebhookEndpoint, at: string, edit: { form: HTMLElement; open(): void }): HTMLElement[] {
  const button = (id: string, text: string, act: (b: HTMLButtonElement) => Promise<void>) => {
    const b = h('button', { type: 'button', class: 'secondary', id: `${id}-${e.id}` }, text);
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        await act(b);
      } catch (err) {
        ctx.fail(err);
      } finally {
        b.disabled = false;
      }
    });
    return b;
  };
  const enabling = e.status === 'disabled';
  const toggle = button('webhook-toggle', enabling ? 'Enable' : 'Disable', async () => {
    const saved = await api<WebhookEndpoint>(at, { method: 'PATCH', body: { status: enabling ? 'enabled' : 'disabled' } });
    await ctx.again({
      message: enabling
        ? `Enabled ${saved.url}: its pending deliveries go out now, in order.`
        : `Disabled ${saved.url}: its events wait as pending deliveries until it is enabled.`,
      focus: `webhook-toggle-${e.id}`,
    });
  });
  const editButton = h(
    'button',
    { type: 'button', class: 'secondary', id: `webhook-edit-${e.id}`, 'aria-expanded': 'false', 'aria-controls': `webhook-edit-form-${e.id}` },
    'Edit',
  );
  editButton.addEventListener('click', () => edit.open());
  const rotate = button('webhook-rotate', 'Rotate secret', async () => {
    if (!confirm(`Rotate the signing secret of ${e.url}? The new one is shown once; the current one keeps signing for 24 hours.`)) return;
    const rotated = await api<WebhookEndpointWithSecret>(`${at}/rotate`, { method: 'POST' });
    await ctx.again({
      message: `Rotated the secret of ${rotated.url}.`,
      secret: { endpoint: rotated.id, value: rotated.secret, rotated: true },
      focus: 'webhook-secret',
    });
  });
  const remove = button('webhook-delete', 'Delete', async () => {
    if (!confirm(`Delete the endpoint ${e.url} and its deliveries log? Nothing more is sent to it.`)) return;
    await api<null>(at, { method: 'DELETE' });
    await ctx.again({ message: `Deleted the endpoint ${e.url}.`, focus: 'webhook-list-title' });
  });
  return [toggle, editButton, rotate, remove];
}

function editForm(ctx: Context, e: WebhookEndpoint, at: string): { form: HTMLElement; open(): void } {
  const prefix = `webhook-edit-${e.id}`;
  const f = endpointFields(prefix, e);
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const form = h(
    'form',
    { class: 'form webhook-edit', id: `webhook-edit-form-${e.id}`, hidden: true, 'aria-label': `Edit ${e.url}` },
    f.fields,
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: `${prefix}-save` }, 'Save'), cancel),
    status,
  );
  const shut = (open: boolean) => {
    form.hidden = !open;
    document.getElementById(prefix)?.setAttribute('aria-expanded', String(open));
  };
  cancel.addEventListener('click', () => {
    shut(false);
    document.getElementById(prefix)?.focus();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = f.read(status);
    if (!body) return;
    try {
      const saved = await api<WebhookEndpoint>(at, { method: 'PATCH', body: { url: body.url, events: body.events, description: body.description || null } });
      await ctx.again({ message: `Saved ${saved.url}.`, focus: prefix });
    } catch (err) {
      status.replaceChildren(errorBox(err));
      f.url.focus();
    }
  });
  return {
    form,
    open() {
      const opening = form.hidden !== false;
      shut(opening);
      if (opening) f.url.focus();
    },
  };
}

const resultText = (code: number | null, error: string | null) => [code === null ? '' : `HTTP ${code}`, error ?? ''].filter(Boolean).join(' · ') || '—';

/** An endpoint's deliveries log: the newest page, more on request, each delivery opening to its
 *  attempts and payload. While a delivery due soon is pending it reads itself again each second
 *  (until it is detached, or for at most FOLLOW_ROUNDS readings). */
function deliveriesLog(ctx: Context, e: WebhookEndpoint, first: WebhookDeliveryPage) {
  const at = `${ctx.path}/${encodeURIComponent(e.id)}`;
  let rows: WebhookDelivery[] = first.data;
  let hasMore = first.has_more;
  let rounds = 0;
  let timer: number | undefined;
  const open = new Set<string>();
  const body = h('tbody', {});
  const status = h('div', { class: 'notice', id: `deliveries-status-${e.id}`, role: 'status', 'aria-live': 'polite' });
  const empty = h('p', { class: 'muted', id: `deliveries-empty-${e.id}` }, 'No deliveries yet.');
  const head = ['Event', 'Event id', 'Status', 'Attempts', 'Last result', 'Next attempt', 'Delivered', ''];
  const tableWrap = h(
    'div',
    { class: 'table-wrap' },
    h('table', { class: 'stack deliveries', id: `deliveries-${e.id}` }, h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))), body),
  );
  const more = h('button', { type: 'button', class: 'secondary', id: `deliveries-more-${e.id}` }, 'Load more');
  const refreshButton = h('button', { type: 'button', class: 'secondary', id: `deliveries-refresh-${e.id}` }, 'Refresh');
  const section = h(
    'section',
    { class: 'webhook-log', 'aria-labelledby': `deliveries-title-${e.id}` },
    h('h3', { id: `deliveries-title-${e.id}` }, 'Deliveries, newest first'),
    status,
    empty,
    tableWrap,
    h('div', { class: 'actions' }, more, refreshButton),
  );

  const fail = (err: unknown) => status.replaceChildren(errorBox(err));

  async function showDetail(d: WebhookDelivery, panel: HTMLElement): Promise<void> {
    panel.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    try {
      const detail = await api<WebhookDeliveryDetail>(`${at}/deliveries/${encodeURIComponent(d.id)}`);
      panel.replaceChildren(
        h('h4', {}, `Attempts of ${detail.event_id}`),
        detail.attempt_log.length === 0
          ? h('p', { class: 'muted' }, 'Not tried yet.')
          : table(
              ['Attempt', 'Started', 'Took', 'Status code', 'Error', "The receiver's answer (its start, as text)"],
              detail.attempt_log.map((a) => [
                String(a.attempt),
                utc(a.started_at),
                `${Math.round(a.duration_ms).toLocaleString('en')} ms`,
                a.status_code === null ? '—' : String(a.status_code),
                a.error ?? '—',
                a.response_excerpt === null || a.response_excerpt === '' ? '—' : h('pre', { class: 'webhook-excerpt' }, a.response_excerpt),
              ]),
            ),
        h('h4', {}, 'Event payload (its data)'),
        h('pre', { class: 'webhook-payload' }, JSON.stringify(detail.payload, null, 2) ?? 'null'),
      );
    } catch (err) {
      panel.replaceChildren(errorBox(err));
    }
  }

  function row(d: WebhookDelivery): HTMLElement[] {
    const panel = h('div', { id: `delivery-${d.id}`, class: 'delivery-panel', role: 'region', 'aria-label': `Delivery ${d.id} of ${d.event_id}` });
    const detailRow = h('tr', { class: 'delivery-detail', hidden: true }, h('td', { colspan: String(head.length) }, panel));
    const details = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        id: `details-${d.id}`,
        'aria-expanded': 'false',
        'aria-controls': `delivery-${d.id}`,
        'aria-label': `Details of ${d.event_type} ${d.event_id}`,
      },
      'Details',
    );
    const setOpen = (now: boolean) => {
      detailRow.hidden = !now;
      details.setAttribute('aria-expanded', String(now));
      if (now) {
        open.add(d.id);
        void showDetail(d, panel);
      } else open.delete(d.id);
    };
    details.addEventListener('click', () => setOpen(details.getAttribute('aria-expanded') !== 'true'));
    const again = h(
      'button',
      { type: 'button', class: 'secondary', id: `redeliver-${d.id}`, 'aria-label': `Redeliver ${d.event_type} ${d.event_id}` },
      'Redeliver',
    );
    again.addEventListener('click', async () => {
      again.disabled = true;
      try {
        const queued = await api<{ delivery_id: WebhookDelivery['id'] }>(`${at}/deliveries/${encodeURIComponent(d.id)}/redeliver`, { method: 'POST' });
        await refresh(`${d.event_id} is queued again (delivery ${queued.delivery_id}).`);
      } catch (err) {
        fail(err);
      } finally {
        again.disabled = false;
      }
    });
    const next = d.status !== 'pending' ? '—' : e.status === 'disabled' ? 'when the endpoint is enabled' : d.next_attempt_at ? utc(d.next_attempt_at) : 'soon';
    const cells: (string | Node)[] = [
      h('code', {}, d.event_type),
      h('code', {}, d.event_id),
      h('span', { class: `delivery-${d.status}` }, d.status),
      String(d.attempts),
      resultText(d.last_status_code, d.last_error),
      next,
      d.delivered_at ? utc(d.delivered_at) : '—',
      h('span', { class: 'actions' }, details, again),
    ];
    const line = h('tr', { 'data-delivery': d.id }, ...cells.map((c, i) => h('td', { 'data-label': head[i] ?? '' }, c)));
    if (open.has(d.id)) setOpen(true);
    return [line, detailRow];
  }

  function draw(): void {
    // A button of the log that had focus keeps it: the rows are drawn anew with the same ids.
    const focused = body.contains(document.activeElement) ? document.activeElement?.id : undefined;
    body.replaceChildren(...rows.flatMap(row));
    empty.hidden = rows.length > 0;
    tableWrap.hidden = rows.length === 0;
    more.hidden = !hasMore;
    if (focused) document.getElementById(focused)?.focus();
    follow();
  }

  /** Reads the newest page again (as many as are shown, up to 100); `message` is said once read. */
  async function refresh(message?: string, resetRounds = true): Promise<void> {
    if (resetRounds) rounds = 0;
    try {
      const page = await api<WebhookDeliveryPage>(`${at}/deliveries?limit=${Math.min(100, Math.max(PAGE, rows.length))}`);
      const changed = JSON.stringify(page.data) !== JSON.stringify(rows) || page.has_more !== hasMore;
      if (message !== undefined) status.textContent = message;
      if (!changed) return follow();
      rows = page.data;
      hasMore = page.has_more;
      draw();
    } catch (err) {
      fail(err);
    }
  }

  /** Reads the log again in a second while a delivery due soon is pending. */
  function follow(): void {
    if (timer !== undefined) return;
    const soon = Date.now() + FOLLOW_SECONDS * 1000;
    const waiting = e.status === 'enabled' && rows.some((d) => d.status === 'pending' && (d.next_attempt_at === null || Date.parse(d.next_attempt_at) <= soon));
    if (!waiting || rounds >= FOLLOW_ROUNDS) return;
    rounds++;
    timer = window.setTimeout(() => {
      timer = undefined;
      if (section.isConnected) void refresh(undefined, false);
    }, 1000);
  }

  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api<WebhookDeliveryPage>(`${at}/deliveries?limit=${PAGE}&starting_after=${encodeURIComponent(rows.at(-1)!.id)}`);
      const firstNew = page.data[0];
      rows = [...rows, ...page.data];
      hasMore = page.has_more;
      draw();
      // Focus goes to the first delivery read, where the reading goes on.
      if (firstNew) document.getElementById(`details-${firstNew.id}`)?.focus();
    } catch (err) {
      fail(err);
    } finally {
      more.disabled = false;
    }
  });
  refreshButton.addEventListener('click', () => void refresh(''));
  draw();
  return { section, refresh, fail };
}
