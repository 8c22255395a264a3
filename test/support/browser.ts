// What the dashboard's browser tests share: Debian's Chromium driven by playwright-core (no
// downloaded browser; components.ts: CI installs it, and outside CI the tests are skipped without it), the real
// app listening on a loopback port, pages that collect console errors, and a member signed in
// through a stand-in identity provider on loopback with a token made by jose.

import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { start, type Running } from './server.ts';
import { IdentityProvider, makeKey, signWith } from './idp.ts';
import { CHROMIUM, needs } from './components.ts';

export const SHOTS = new URL('../../artifacts/screenshots/', import.meta.url).pathname;
export const noBrowser = needs('chromium');

export async function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export async function listen(s: Running): Promise<string> {
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const address = s.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/** A new page whose console errors and uncaught exceptions land in `problems`. */
export async function watchedPage(browser: Browser, problems: string[], width = 1366): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('dialog', (d) => void d.accept());
  return page;
}

/** A server with sign-in through a stand-in identity provider, and a way to sign a page in as
 *  what the hosted project does after the provider: back to /login with the token in the fragment. */
export async function signInServer(
  overrides: Record<string, unknown> = {},
  clock?: () => number,
): Promise<{ base: string; idp: IdentityProvider; s: Running; signIn(page: Page, claims: Record<string, string>): Promise<string>; close(): Promise<void> }> {
  const idp = await new IdentityProvider().start();
  const key = await makeKey('ES256', 'web-1');
  idp.published = [key];
  const s = await start({
    overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'w'.repeat(48), authConfigured: true, ...overrides },
    ...(clock ? { clock } : {}),
  });
  const base = await listen(s);
  return {
    base,
    idp,
    s,
    async signIn(page, claims) {
      const token = await signWith(key, idp.issuer, claims);
      await page.goto(`${base}/login#access_token=${token}&token_type=bearer&expires_in=3600`);
      return token;
    },
    async close() {
      await s.close();
      await idp.close();
    },
  };
}

/** The member API from a signed-in page: its session cookie, and the CSRF header on writes. */
export function memberApi(page: Page): (path: string, method?: string, body?: unknown) => Promise<Record<string, any>> {
  return (path, method = 'GET', body) =>
    page.evaluate(
      async ({ path, method, body }) => {
        const csrf = document.cookie
          .split('; ')
          .find((c) => c.startsWith('service_csrf='))
          ?.split('=')[1];
        const res = await fetch(path, {
          method,
          headers: { 'content-type': 'application/json', ...(csrf ? { 'x-csrf-token': decodeURIComponent(csrf) } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return res.json();
      },
      { path, method, body },
    );
}

/** A signed-in member's page on a sign-in server (both closed with the test), whose console errors
 *  land in `problems`, and the member API from it. */
export async function signedInMember(
  t: { teardown(fn: () => unknown): void },
  claims: Record<string, string>,
  overrides: Record<string, unknown> = {},
  clock?: () => number,
) {
  const server = await signInServer(overrides, clock);
  const browser = await launch();
  t.teardown(async () => {
    await browser.close();
    await server.close();
  });
  const problems: string[] = [];
  const page = await watchedPage(browser, problems);
  await server.signIn(page, claims);
  await page.waitForSelector('#who');
  return { server, page, problems, member: memberApi(page) };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical accessibility violations on the page as it is now, as
 *  "rule: the first offending element" lines (empty when there are none). The script is evaluated
 *  through the browser's debugging protocol, so the page's Content-Security-Policy stays as it is. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes[0]?.target)}${v.nodes.length > 1 ? ` and ${v.nodes.length - 1} more` : ''}`);
  });
}

/** The cases tests' organization: the owner Olive signed in on `page`, an organization "Casework"
 *  with an API key, the analyst Ana invited and signed in on a page of her own (`analyst`, `ana` her
 *  member API), a rule sending customers `r-…` to review, and `score` to send a payment with the key
 *  (its decision). */
export async function casework(t: { teardown(fn: () => unknown): void; equal(found: unknown, wanted: unknown, message: string): unknown }) {
  const signedIn = await signedInMember(t, { sub: 'olive', email: 'olive@example.com', name: 'Olive Owner' });
  const { server, page, problems, member } = signedIn;
  const org = await member('/api/organizations', 'POST', { name: 'Casework' });
  const key = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'checkout' });
  t.equal(
    (await member(`/api/organizations/${org.id}/members`, 'POST', { email: 'ana@example.com', role: 'analyst' })).email,
    'ana@example.com',
    'Ana invited',
  );
  const analyst = await watchedPage(page.context().browser()!, problems);
  await server.signIn(analyst, { sub: 'ana', email: 'ana@example.com', name: 'Ana Lyst' });
  await analyst.waitForSelector('#who');
  const rule = await member(`/api/organizations/${org.id}/rules`, 'POST', {
    name: 'review r-',
    expression: 'customer_id.startsWith("r-")',
    action: 'review',
    status: 'active',
  });
  t.equal(rule.name, 'review r-', 'the rule sending r-… to review');
  const score = async (transaction_id: string, customer_id: string, amount = 80) => {
    const res = await fetch(`${server.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transaction_id, amount, customer_id, merchant_id: 'M-1', location: 'Porto', payment_type: 'wallet' }),
    });
    t.equal(res.status, 200, `${transaction_id} scored`);
    return (await res.json()).decision as string;
  };
  /** Runs `act`, which makes the service refuse with `status` once: the browser logs that refusal,
   *  and what else was logged is answered (nothing, the caller asserts). */
  const refused = async (p: Page, status: number, act: () => Promise<void>): Promise<string[]> => {
    const logged = problems.length;
    const expected = p.waitForEvent('console', (m) => new RegExp(`status of ${status}`).test(m.text()));
    await act();
    await expected;
    return problems.splice(logged).filter((m) => !new RegExp(`status of ${status}`).test(m));
  };
  return { ...signedIn, org, key, analyst, ana: memberApi(analyst), score, refused };
}
