// Bodies other than JSON over real HTTP, on each storage back end, with real sign-in and an API
// key: a JSON route on either surface (the sandbox score, the key's score and outcomes, a member's
// rule) answers plain text, a CSV or a multipart form with 415 `unsupported_media_type`, never
// tries it as JSON (422 `body`); the upload, the one route that reads a CSV or a form, still does;
// an unknown field in a key's score is named (`body.foo`).

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor } from '../support/accounts.ts';

const CSV = 'transaction_id,timestamp,amount,customer_id,merchant_id,location,payment_type\nT1,2026-01-01T10:00:00Z,12.50,C1,M1,Lisbon,wallet\n';
const BOUNDARY = 'media-types-test';
const FORM = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="mine.csv"\r\nContent-Type: text/csv\r\n\r\n${CSV}\r\n--${BOUNDARY}--\r\n`;
/** Content type and body of each kind of body that is not JSON. */
const NOT_JSON: [string, string][] = [
  ['text/plain', '{"amount": 1}'],
  ['text/plain; charset=utf-8', 'amount=1'],
  ['text/csv', CSV],
  ['application/csv', CSV],
  [`multipart/form-data; boundary=${BOUNDARY}`, FORM],
];

for (const backend of backends()) {
  t.test(`media types on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const org = await live.organization('Media');
    await live.s.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(live.s.app.server.address() as { port: number }).port}`;
    const post = (path: string, type: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type, ...headers }, body });
    const key = { authorization: `Bearer ${org.key}` };

    await t.test('a JSON route answers any other body 415, on both surfaces', async (t) => {
      const routes: [string, Record<string, string>][] = [
        ['/api/risk/score', {}],
        ['/api/v1/risk/score', key],
        ['/api/v1/outcomes', key],
        [`/api/organizations/${org.id}/rules`, org.owner.headers],
      ];
      for (const [path, headers] of routes) {
        for (const [type, body] of NOT_JSON) {
          const res = await post(path, type, body, headers);
          const detail = (await res.json()).detail;
          t.equal(res.status, 415, `${path}, ${type.split(';')[0]}: 415`);
          t.equal(detail.reason, 'unsupported_media_type');
          t.equal(detail.fix, 'Send the body with Content-Type: application/json.');
        }
      }
      // A DELETE's body too (the same parsers).
      const removal = await fetch(`${base}/api/v1/lists/blocked/items`, { method: 'DELETE', headers: { ...key, 'content-type': 'text/plain' }, body: 'x' });
      t.equal(removal.status, 415, 'a DELETE with a text body: 415');
      // JSON still works on each.
      const scored = await post(
        '/api/v1/risk/score',
        'application/json',
        JSON.stringify({ amount: 12, customer_id: 'c1', merchant_id: 'm1', explain: false }),
        key,
      );
      t.equal(scored.status, 200, 'a JSON score is answered');
    });

    await t.test('the upload still reads a CSV and a form, and nothing else', async (t) => {
      const csv = await post('/api/datasets/upload', 'text/csv', CSV);
      t.equal(csv.status, 201, 'text/csv');
      const form = await post('/api/datasets/upload?filename=x.csv', `multipart/form-data; boundary=${BOUNDARY}`, FORM);
      t.equal(form.status, 201, 'multipart/form-data');
      t.equal((await form.json()).original_name, 'mine.csv');
      const text = await post('/api/datasets/upload', 'text/plain', CSV);
      t.equal(text.status, 415, 'text/plain');
      t.equal((await text.json()).detail.fix, 'Send the body with Content-Type: text/csv or multipart/form-data.');
    });

    await t.test("an unknown field of a key's score is named", async (t) => {
      const res = await post('/api/v1/risk/score', 'application/json', JSON.stringify({ amount: 12, customer_id: 'c1', merchant_id: 'm1', foo: true }), key);
      t.equal(res.status, 422);
      const detail = (await res.json()).detail;
      t.equal(detail.reason, 'validation_failed');
      t.same(
        detail.fields.map((f: { path: string }) => f.path),
        ['body.foo'],
      );
    });
  });
}
