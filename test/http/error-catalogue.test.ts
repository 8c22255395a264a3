// Each reason code is answered with one status, everywhere: the catalogue (contract/errors.ts), the
// reference at /api/docs (every documented error status is a catalogue status, and the body's
// `reason` lists exactly the catalogue's codes), docs/integrating.md's table of errors (each code
// it names under the catalogue's status, and every code named), and real answers over HTTP, from
// the framework's refusals to a use case's.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { ERRORS, ERROR_REASONS, type ErrorReason } from '../../src/contract/errors.ts';
import { start } from '../support/server.ts';

const running = await start();
t.teardown(() => running.close());
await running.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(running.app.server.address() as { port: number }).port}`;

t.test('the catalogue: every reason has a status of an error, a message and a fix', async (t) => {
  for (const reason of ERROR_REASONS) {
    const d = ERRORS[reason];
    t.ok(d.status >= 400 && d.status < 600, `${reason}: ${d.status} is an error status`);
    t.ok(d.message.length > 0 && d.fix.length > 0, `${reason}: a default message and fix`);
  }
});

t.test('the reference documents the catalogue', async (t) => {
  const doc = (await (await fetch(`${base}/api/docs/json`)).json()) as {
    paths: Record<string, Record<string, { description?: string; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  };
  const statuses = new Set<number>(ERROR_REASONS.map((r) => ERRORS[r].status));
  const documented = new Set<string>();
  let enums: unknown[] | undefined;
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      // A description that names a status and a reason ("409 `conflict`") names the catalogue's.
      for (const [, status, code] of (op.description ?? '').matchAll(/(\d{3}) `([a-z_]+)`/g)) {
        if (code! in ERRORS && ERRORS[code as ErrorReason].status !== Number(status)) documented.add(`${method.toUpperCase()} ${path} says ${status} ${code}`);
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (Number(status) < 400) continue;
        if (!statuses.has(Number(status))) documented.add(`${method.toUpperCase()} ${path} documents ${status}, which no reason answers`);
        const schema = response.content?.['application/json']?.schema as
          | { properties?: { detail?: { properties?: { reason?: { enum?: unknown[] } } } } }
          | undefined;
        enums ??= schema?.properties?.detail?.properties?.reason?.enum;
      }
    }
  }
  t.same([...documented], [], 'every documented error status is the status of a reason');
  t.same([...(enums ?? [])].sort(), [...ERROR_REASONS].sort(), "the error body's reason lists exactly the catalogue's codes");
});

t.test("docs/integrating.md's table of errors gives each code the catalogue's status", async (t) => {
  const text = readFileSync(new URL('../../docs/integrating.md', import.meta.url), 'utf8');
  const table = text.slice(text.indexOf('| Situation | Status | reason |'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  const named = new Set<string>();
  for (const row of rows) {
    const [, , status, reasons] = row.split('|').map((c) => c.trim());
    for (const m of (reasons ?? '').matchAll(/`([a-z_]+)`/g)) {
      const code = m[1]!;
      if (!(code in ERRORS)) continue;
      named.add(code);
      t.equal(Number(status), ERRORS[code as ErrorReason].status, `${code}: ${status} in the docs`);
    }
  }
  t.same(
    ERROR_REASONS.filter((r) => !named.has(r)),
    [],
    'every reason code is in the table',
  );
});

t.test('answers carry the status of their reason', async (t) => {
  const json = { 'content-type': 'application/json' };
  const score = JSON.stringify({ amount: 10, customer_id: 'C1', merchant_id: 'M1' });
  const cases: [string, string, RequestInit][] = [
    ['an unknown path', '/api/nothing-here', {}],
    ['a method the path does not have', '/api/risk/score', { method: 'DELETE' }],
    ['a path parameter over the router limit', `/api/jobs/${'x'.repeat(1200)}`, {}],
    ['an id over its declared length', `/api/jobs/${'x'.repeat(300)}`, {}],
    ['malformed JSON', '/api/risk/score', { method: 'POST', headers: json, body: '{"amount": 1,' }],
    [
      'a body over the limit',
      '/api/risk/score',
      { method: 'POST', headers: json, body: JSON.stringify({ amount: 1, customer_id: 'x'.repeat(70 * 1024), merchant_id: 'M' }) },
    ],
    ['another content type', '/api/risk/score', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: score }],
    [
      'a field of the wrong shape',
      '/api/risk/score',
      { method: 'POST', headers: json, body: JSON.stringify({ amount: 'ten', customer_id: 'C1', merchant_id: 'M1' }) },
    ],
    ['no API key', '/api/v1/risk/score', { method: 'POST', headers: json, body: score }],
    ['an unknown API key', '/api/v1/risk/score', { method: 'POST', headers: { ...json, authorization: 'Bearer sk_nothing' }, body: score }],
    ['a member route without a session', '/api/organizations', {}],
    ['a job that does not exist', '/api/jobs/job_nothing', {}],
  ];
  const seen = new Set<string>();
  for (const [what, path, init] of cases) {
    const res = await fetch(`${base}${path}`, init);
    const body = (await res.json()) as { detail: { reason: ErrorReason } };
    seen.add(body.detail.reason);
    t.equal(res.status, ERRORS[body.detail.reason].status, `${what}: ${res.status} ${body.detail.reason}`);
  }
  t.ok(seen.size >= 8, `${seen.size} different reasons answered`);
});
