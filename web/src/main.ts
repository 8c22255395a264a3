// The dashboard: a small hash router over the pages (no framework), the service's health in the
// header, and focus moved to the page on navigation for keyboard and screen-reader users. It calls
// only the documented `/api/...` endpoints (api.ts).
//
// Each navigation renders into a container of its own, which replaces the last one: a page still
// waiting for its data when the user moves on finishes into a container no longer shown, so a slow
// page can never cover the one navigated to after it (and its polling, which stops once its
// elements are detached, ends).
//
// Links for owners only (Data protection) start hidden: they show once the visitor is known to own
// an organization, checked at load and again wherever a page reads the member's organizations
// (org.ts).

import { api } from './api.ts';
import type { Health } from './contract.ts';
import { evaluationPage } from './pages/evaluation.ts';
import { scorePage } from './pages/score.ts';
import { datasetsPage } from './pages/datasets/page.ts';
import { modelsPage } from './pages/models.ts';
import { accountPage } from './pages/account.ts';
import { transactionsPage } from './pages/transactions.ts';
import { reviewPage } from './pages/review.ts';
import { casesPage } from './pages/cases.ts';
import { inboxesPage } from './pages/inboxes.ts';
import { overviewPage } from './pages/overview.ts';
import { entityPage } from './pages/entity.ts';
import { rulesPage } from './pages/rules/page.ts';
import { listsPage } from './pages/lists.ts';
import { fieldsPage } from './pages/fields.ts';
import { webhooksPage } from './pages/webhooks.ts';
import { dataProtectionPage } from './pages/data-protection.ts';
import { currentRoute, type Route } from './route.ts';
import { completeSignIn } from './login.ts';
import { checkOwnerLinks } from './org.ts';

const pages: Record<string, (root: HTMLElement, route: Route) => void | Promise<void>> = {
  score: scorePage,
  transactions: transactionsPage,
  review: reviewPage,
  cases: casesPage,
  inboxes: inboxesPage,
  overview: overviewPage,
  entity: entityPage,
  rules: rulesPage,
  lists: listsPage,
  fields: fieldsPage,
  webhooks: webhooksPage,
  'data-protection': dataProtectionPage,
  datasets: datasetsPage,
  evaluation: evaluationPage,
  models: modelsPage,
  account: accountPage,
};

const main = document.getElementById('main')!;

function route(moveFocus: boolean): void {
  const r = currentRoute();
  const name = r.path[0] ?? 'score';
  const page = pages[name] ?? scorePage;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    // A customer's or merchant's page belongs with Transactions, the inboxes with Cases.
    const section = name === 'entity' ? 'transactions' : name === 'inboxes' ? 'cases' : name;
    if (a.dataset.page === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = document.createElement('div');
  main.replaceChildren(view);
  void page(view, r);
  // After a navigation (not on first load, where the skip link comes first) focus the new page.
  if (moveFocus) main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => route(true));
if (location.pathname === '/login') void completeSignIn(main).then(() => route(false));
else {
  route(false);
  checkOwnerLinks().catch(() => undefined);
}

api<Health>('/api/health')
  .then((h) => {
    document.getElementById('status')!.textContent = `${h.status === 'ok' ? 'Service ok' : 'Service degraded'} · model ${h.model.id ?? 'unavailable'}`;
  })
  .catch(() => {
    document.getElementById('status')!.textContent = 'Service unreachable';
  });
