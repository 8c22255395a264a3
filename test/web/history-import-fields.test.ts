// The Datasets page in headless Chromium for a signed-in member whose organization declared fields
// of its own: an upload whose columns match ours by name is valid at once; its mapping editor offers
// the file's other columns as the declared fields (a column named like a field pre-selected, such as
// "Email Domain" for email_domain; a field taken by one column greyed out for the others); the
// member maps 3DS onto three_ds, applies, sees the fields on the upload's card, imports it into the
// organization's history from the page, and the rows' records (read with the organization's API
// key) carry the fields, typed, and filter on the key field. A second file holding a card number in
// the mapped column fails its import on the page naming the row and the column, never the number,
// with nothing stored. axe-core finds no serious or critical problem on the editor; screenshots go to
// artifacts/screenshots/datasets-fields-*.png.

import t from 'tap';
import { accessibilityProblems, noBrowser, SHOTS, signedInMember } from '../support/browser.ts';

const DAY = 86_400_000;

t.test('datasets page: columns mapped onto declared fields, then imported', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(t, { sub: 'field-importer', email: 'imports@example.com', name: 'Ima Porter' });
  const org = await member('/api/organizations', 'POST', { name: 'Fieldhouse' });
  for (const f of [
    { name: 'email_domain', type: 'string', key: true },
    { name: 'basket_items', type: 'number' },
    { name: 'three_ds', type: 'boolean' },
  ])
    t.equal((await member(`/api/organizations/${org.id}/fields`, 'POST', f)).name, f.name, `${f.name} declared`);
  const key = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'reader' });
  const asKey = async (path: string) =>
    (await (await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${key.secret}` } })).json()) as Record<string, any>;
  const at = (days: number) => new Date(Date.now() - days * DAY).toISOString();
  const file = (rows: string[][]) =>
    Buffer.from(
      `transaction_id,timestamp,amount,customer_id,merchant_id,label,Email Domain,basket_items,3DS,notes\n${rows.map((r) => r.join(',')).join('\n')}\n`,
    );

  const fieldSelect = (header: string) => page.getByLabel(`Field of yours for column ${header}`);
  /** Uploads `name`, opens its mapping editor, maps Email Domain and 3DS, applies. */
  const uploadAndMap = async (name: string, rows: string[][]) => {
    await page.goto(`${server.base}/#/datasets`);
    await page.waitForSelector('#dataset-history table, #dataset-history p:not(:has-text("Loading"))');
    await page.setInputFiles('#dataset-file', { name, mimeType: 'text/csv', buffer: file(rows) });
    await page.waitForSelector('#dataset');
    await page.click('#edit-mapping');
    await page.waitForSelector('#mapping #fields-note');
  };

  await t.test('the editor offers the declared fields for the other columns', async (t) => {
    await uploadAndMap('shop-history.csv', [
      ['w-1', at(3), '12.50', 'c-1', 'm-1', '0', 'example.com', '2', 'yes', 'first order'],
      ['w-2', at(2), '80', 'c-2', 'm-1', '1', 'mail.example', '7', 'no', ''],
      ['w-3', at(1), '15', 'c-1', 'm-2', '0', '', '', 'YES', 'gift'],
    ]);
    t.match(await page.locator('#fields-note').textContent(), /hold one of Fieldhouse’s own fields/);
    t.equal(await fieldSelect('basket_items').inputValue(), 'basket_items', 'a column named like a field is pre-selected');
    t.equal(await fieldSelect('Email Domain').inputValue(), 'email_domain', '"Email Domain" written as a field name is one too');
    t.equal(await fieldSelect('3DS').inputValue(), '', 'the others start unused');
    t.equal(await fieldSelect('notes').inputValue(), '');
    t.same(
      await fieldSelect('notes').locator('option').allTextContents(),
      ['not used', 'field basket_items (number)', 'field email_domain (string, key)', 'field three_ds (boolean)'],
      'every declared field, with its type',
    );
    t.equal(await page.locator('#file-columns tr:has(code:text-is("amount")) select').count(), 0, 'a column used as ours is offered no field');
    await fieldSelect('3DS').selectOption('three_ds');
    t.ok(await fieldSelect('notes').locator('option[value="email_domain"]').isDisabled(), 'a field taken by one column is greyed out for the others');
    await page.screenshot({ path: `${SHOTS}datasets-fields-mapping.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.getByRole('button', { name: 'Apply mapping' }).click();
    await page.waitForSelector('#mapped-fields');
    t.match(await page.locator('#mapped-fields').textContent(), /email_domain from “Email Domain”/, 'the card lists the fields mapped');
    t.match(await page.locator('#mapped-fields').textContent(), /three_ds from “3DS”/);
  });

  await t.test('imported from the page: the rows carry the fields', async (t) => {
    await page.getByRole('button', { name: 'Import into Fieldhouse’s history' }).click();
    await page.waitForSelector('#import-summary', { timeout: 60_000 });
    t.match(await page.locator('#import-summary').textContent(), /^Imported 3 rows \(3 labelled, 1 fraud\)/);
    t.equal(await page.locator('#imported-link').getAttribute('href'), `#/transactions?org=${org.id}`);
    await page.screenshot({ path: `${SHOTS}datasets-fields-imported.png`, fullPage: true });
    t.same((await asKey('/api/v1/transactions/w-1')).fields, { email_domain: 'example.com', basket_items: 2, three_ds: true });
    t.same((await asKey('/api/v1/transactions/w-2')).fields, { email_domain: 'mail.example', basket_items: 7, three_ds: false });
    t.same((await asKey('/api/v1/transactions/w-3')).fields, { three_ds: true }, 'empty cells are absent; notes was not mapped');
    t.same(
      (await asKey('/api/v1/transactions?field.email_domain=mail.example')).data.map((r: { transaction_id: string }) => r.transaction_id),
      ['w-2'],
      'the key field filters the listing',
    );
  });

  await t.test('a card number in a mapped column: the import fails on the page, naming where, not what', async (t) => {
    await uploadAndMap('with-a-card.csv', [
      ['x-1', at(3), '12.50', 'c-1', 'm-1', '0', 'example.com', '2', 'yes', ''],
      ['x-2', at(2), '80', 'c-2', 'm-1', '1', '4111 1111 1111 1111', '7', 'no', ''],
    ]);
    await fieldSelect('Email Domain').selectOption('email_domain');
    await page.getByRole('button', { name: 'Apply mapping' }).click();
    await page.waitForSelector('#mapped-fields');
    await page.getByRole('button', { name: 'Import into Fieldhouse’s history' }).click();
    await page.waitForSelector('#import-error', { timeout: 60_000 });
    const error = (await page.locator('#import-error').textContent())!;
    t.match(error, /The import failed\.card_number_refused: row 2, column "Email Domain" \(fields\.email_domain\) holds a card number/);
    t.notOk(/4111/.test((await page.locator('main').textContent()) ?? ''), 'the number is nowhere on the page');
    t.equal((await fetch(`${server.base}/api/v1/transactions/x-1`, { headers: { authorization: `Bearer ${key.secret}` } })).status, 404, 'nothing stored');
    await page.screenshot({ path: `${SHOTS}datasets-fields-refused.png`, fullPage: true });
  });

  await page.close();
  t.same(problems, [], 'no console errors or CSP violations');
});
