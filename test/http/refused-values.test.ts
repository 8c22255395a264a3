// A card number or an IP address sent in a payment's fields never reaches the log or the database:
// a real server process on the embedded database, its request log and standard error read whole,
// sent such values on both score routes (a declared field and an undeclared one, spaced and dashed
// card numbers, IPv4 and IPv6): every one is refused with its reason code, the answer names the
// field and never the value, and neither the output nor the organization's records hold it.

import t from 'tap';
import { SignIn, spawnServer, withKey, type ServerProcess } from '../support/processes.ts';
import { dataDir } from '../support/data-dir.ts';

const REFUSED: [string, string, string][] = [
  ['card_number_refused', 'card_token', '4111 1111 1111 1111'],
  ['card_number_refused', 'note', '5500-0000-0000-0004'],
  ['card_number_refused', 'note', '378282246310005'],
  ['ip_address_refused', 'device_ip', '203.0.113.77'],
  ['ip_address_refused', 'note', '2001:db8::8a2e:370:7334'],
];

t.test('refused values are never logged or stored', async (t) => {
  const signIn = await SignIn.start();
  let server: ServerProcess | undefined;
  t.teardown(async () => {
    await server?.stop('SIGKILL');
    await signIn.close();
  });
  // Every request has a line at debug: the most the log ever says.
  server = await spawnServer({ ...signIn.env, DATA_DIR: dataDir('refused-'), LOG_LEVEL: 'debug' }, { stdout: 'pipe' });
  const org = await signIn.organization(server.base, 'refusals');
  const declared = await fetch(`${server.base}/api/organizations/${org.id}/fields`, {
    method: 'POST',
    headers: org.member,
    body: JSON.stringify({ name: 'card_token', type: 'string' }),
  });
  t.equal(declared.status, 201);

  for (const [i, [reason, field, value]] of REFUSED.entries()) {
    for (const route of ['/api/v1/risk/score', '/api/risk/score']) {
      const body = { transaction_id: `r-${i}`, amount: 10, customer_id: 'c-1', merchant_id: 'm-1', fields: { [field]: value } };
      const res =
        route === '/api/v1/risk/score'
          ? await withKey(server.base, org.secret, route, body)
          : await (async () => {
              const r = await fetch(`${server!.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
              return { status: r.status, text: await r.text() };
            })();
      t.equal(res.status, 422, `${route} ${field}: 422`);
      t.match(res.text, new RegExp(`"reason":"${reason}"`), reason);
      t.match(res.text, `fields.${field}`, 'the answer names the field');
      t.notOk(res.text.includes(value), 'and never the value');
    }
  }
  const records = await fetch(`${server.base}/api/organizations/${org.id}/transactions`, { headers: org.member });
  t.same(((await records.json()) as { data: unknown[] }).data, [], 'nothing was stored');
  // Let the request log's last lines arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const output = server.stdout() + server.stderr();
  t.ok(output.includes('/api/v1/risk/score'), `the request log was read: ${output.slice(-600)}`);
  for (const [, , value] of REFUSED) {
    t.notOk(output.includes(value), `the output never holds ${value.slice(0, 4)}…`);
    t.notOk(output.includes(value.replace(/[ -]/g, '')), 'nor its digits alone');
  }
});
