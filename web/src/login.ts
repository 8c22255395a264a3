// /login: where the hosted authentication project sends the browser back after sign-in, with the
// access token in the address's fragment (`#access_token=…`). The token is posted once to
// POST /api/auth/session (the service verifies it and sets its own cookies), wiped from the address
// and history, and never stored by the page; then the account page opens.

import { api } from './api.ts';
import type { SessionResponse } from './contract.ts';
import { errorBox, h } from './dom.ts';

export async function completeSignIn(main: HTMLElement): Promise<void> {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const token = params.get('access_token');
  history.replaceState(null, '', '/#/account');
  const title = h('h1', {}, 'Signing in');
  if (!token) {
    main.replaceChildren(title, errorBox(new Error(params.get('error_description') ?? 'The sign-in did not return an access token.')));
    return;
  }
  main.replaceChildren(title, h('p', { class: 'muted' }, 'Signing in…'));
  try {
    await api<SessionResponse>('/api/auth/session', { method: 'POST', body: { access_token: token } });
    location.hash = '#/account';
  } catch (e) {
    main.replaceChildren(title, errorBox(e));
  }
}
