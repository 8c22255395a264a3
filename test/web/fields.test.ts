// The Fields page in headless Chromium, against the real server with sign-in through a stand-in
// identity provider. From the dashboard alone an owner declares an organization's fields (a string
// key, a number, a boolean; the key's checkbox only usable for a string) and sees them in name
// order with the limits used; the service's refusals are shown with their message and fix (a name
// taken, a name of the wrong shape with the field it names); the rule editor lists the declared
// fields as fields.<name> with their type and description (and, for an organization with none,
// says where an owner declares them), and a rule saved there reads one; the owner retires that
// field after a confirmation that says what retiring does and names the rule, sees it among the
// retired ones, declares its name again and reads its history, and retires another from its page.
// A member who is not an owner sees the fields, a field's history and the editor's list with no
// control to change them. axe-core finds no serious or critical problem, nothing scrolls sideways
// at 390 px, and the console stays clear of anything but the API's expected refusals. Screenshots
// go to artifacts/screenshots/.

import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, memberApi, noBrowser, SHOTS, signedInMember, watchedPage } from '../support/browser.ts';

type Rec = Record<string, any>;

t.test('Fields from the dashboard', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(t, { sub: 'field-owner', email: 'fields@example.com', name: 'Field Owner' });
  const org = await member('/api/organizations', 'POST', { name: 'Fieldstone' });
  const goto = async (hash: string, selector: string, p: Page = page) => {
    await p.goto(`${server.base}/${hash}`);
    await p.waitForSelector(selector);
  };
  const text = async (selector: string, p: Page = page) => (await p.locator(selector).textContent()) ?? '';
  const fields = async (retired = false) => (await member(`/api/organizations/${org.id}/fields${retired ? '?retired=true' : ''}`)) as Rec;
  /** The fields table's rows, as their cells read. */
  const rows = (p: Page = page) => p.locator('#field-table tbody tr').evaluateAll((trs) => trs.map((r) => [...r.children].map((c) => c.textContent ?? '')));
  /** Runs `act`, which makes the API refuse with `status` once: the browser logs that refusal, and nothing else may be logged. */
  const refused = async (status: number, act: () => Promise<void>) => {
    const logged = problems.length;
    const expected = page.waitForEvent('console', (m) => new RegExp(`status of ${status}`).test(m.text()));
    await act();
    await expected;
    const added = problems.splice(logged);
    t.ok(
      added.every((m) => new RegExp(`status of ${status}`).test(m)),
      `only the expected ${status} was logged: ${JSON.stringify(added)}`,
    );
  };
  const declare = async (name: string, type: string, key: boolean, description: string) => {
    await page.fill('#field-name', name);
    await page.selectOption('#field-type', type);
    if (key) await page.check('#field-key');
    await page.fill('#field-description', description);
    await page.click('#field-declare-submit');
  };

  await t.test('an owner declares fields, a key among them, and sees them listed with the limits', async (t) => {
    await goto(`#/fields?org=${org.id}`, '#field-declare');
    t.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Fields', 'Fields is in the navigation');
    t.same(
      await page
        .locator('nav a')
        .allTextContents()
        .then((names) => names.slice(names.indexOf('Rules'), names.indexOf('Rules') + 3)),
      ['Rules', 'Lists', 'Fields'],
      'beside Rules and Lists',
    );
    t.ok(await page.isVisible('#no-fields'));
    t.equal(await text('#field-limits'), '0 of 50 fields, 0 of 5 keys.');

    // The key's checkbox is for text fields only, and says what a key is.
    await page.selectOption('#field-type', 'number');
    t.ok(await page.isDisabled('#field-key'), 'a number cannot be a key');
    t.match(await text('#field-key-hint'), /history of its own.*velocity.*Only a text \(string\) field can be a key/);
    await page.selectOption('#field-type', 'boolean');
    t.ok(await page.isDisabled('#field-key'), 'nor a boolean');
    await page.selectOption('#field-type', 'string');
    t.ok(await page.isEnabled('#field-key'), 'a string can');
    t.match(await text('#field-key-hint'), /At most 5 keys/);

    await declare('email_domain', 'string', true, 'The part after the @ <b>of the e-mail</b>');
    await page.waitForFunction(() => /^Declared email_domain \(string, a key\)/.test(document.querySelector('#field-status')?.textContent ?? ''));
    t.equal(await page.evaluate(() => document.activeElement?.id), 'field-name', 'focus goes back to the name, for the next one');
    t.equal(await page.inputValue('#field-name'), '', 'the form is empty again');
    await declare('basket_items', 'number', false, 'Items in the basket');
    await page.waitForFunction(() => /^Declared basket_items \(number\)/.test(document.querySelector('#field-status')?.textContent ?? ''));
    await declare('three_ds', 'boolean', false, '');
    await page.waitForFunction(() => /^Declared three_ds \(boolean\)/.test(document.querySelector('#field-status')?.textContent ?? ''));

    const listed = await rows();
    t.same(
      listed.map((r) => r.slice(0, 4)),
      [
        ['basket_items', 'number', 'no', 'Items in the basket'],
        ['email_domain', 'string', 'yes', 'The part after the @ <b>of the e-mail</b>'],
        ['three_ds', 'boolean', 'no', '—'],
      ],
      'by name, with type, key and description',
    );
    t.equal(await page.locator('#field-table b').count(), 0, 'a description is text, never markup');
    const me = await member('/api/auth/me');
    t.match(listed[0]![4], new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC by ${me.user.id}$`), 'declared when and by whom');
    t.same(
      listed.map((r) => r[5]),
      ['Retire', 'Retire', 'Retire'],
      'a Retire button on each',
    );
    t.equal(await text('#field-limits'), '3 of 50 fields, 1 of 5 keys.');
    t.same(
      (await fields()).data.map((f: Rec) => [f.name, f.type, f.key, f.description]),
      [
        ['basket_items', 'number', false, 'Items in the basket'],
        ['email_domain', 'string', true, 'The part after the @ <b>of the e-mail</b>'],
        ['three_ds', 'boolean', false, null],
      ],
      'the API reads what the page declared',
    );
    await page.screenshot({ path: `${SHOTS}fields.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the Fields page: no serious or critical accessibility problem (axe-core)');
  });

  await t.test("the service's refusals, with their message and fix", async (t) => {
    await refused(409, async () => {
      await declare('email_domain', 'string', false, '');
      await page.waitForSelector('#field-declare-status .error');
    });
    t.match(
      await text('#field-declare-status .error'),
      /A field named email_domain is declared already\..*Use another name, or retire the field first.*conflict/,
      "the API's message, fix and reason",
    );
    t.equal(await page.getAttribute('#field-declare-status .error', 'role'), 'alert');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'field-name', 'focus goes to the name');

    // The browser checks the name as the service does; past that check the service says which field is wrong.
    await page.fill('#field-name', 'Bad-Name');
    await page.click('#field-declare-submit');
    t.notOk(await page.evaluate(() => (document.getElementById('field-name') as HTMLInputElement).checkValidity()), 'the browser stops a bad name');
    await page.evaluate(() => document.getElementById('field-name')!.removeAttribute('pattern'));
    await refused(422, async () => {
      await page.click('#field-declare-submit');
      await page.waitForFunction(() => /a field of the wrong shape/.test(document.querySelector('#field-declare-status .error')?.textContent ?? ''));
    });
    t.same(
      await page.locator('#field-declare-status .field-problems li').allTextContents(),
      ['name: a field name is a lowercase letter, then up to 39 lowercase letters, digits or underscores'],
      'the field the service names, said in words',
    );
    t.notOk(/at .*\.(ts|js):\d+/.test(await text('#field-declare-status')), 'no stack trace');
    t.equal((await fields()).data.length, 3, 'nothing refused was stored');
    t.same(await accessibilityProblems(page), [], 'a refusal shown: no serious or critical accessibility problem (axe-core)');
  });

  let rule: Rec;
  await t.test('the rule editor lists the declared fields, and a rule reads one', async (t) => {
    await goto(`#/rules/new?org=${org.id}`, '#rule-editor');
    await page.click('#rule-reference summary');
    await page.waitForSelector('#rule-own-fields table');
    const own = await page.locator('#rule-own-fields tbody tr').evaluateAll((trs) => trs.map((r) => [...r.children].map((c) => c.textContent ?? '')));
    t.same(
      own,
      [
        ['fields.basket_items', 'double', 'Items in the basket'],
        ['fields.email_domain', 'string', 'The part after the @ <b>of the e-mail</b> A key: its values have a history of their own.'],
        [
          'field_history.email_domain',
          'history',
          "This value's earlier transactions, strictly before the payment: .prior_transactions, .is_new, .count_1h, .count_24h, .count_7d, .amount_24h, .distinct_customers_24h, .distinct_customers_30d.",
        ],
        ['fields.three_ds', 'bool', 'No description.'],
      ],
      'each as fields.<name>, with the type a rule reads it as and its description, and a key with its history',
    );
    t.ok(
      (await page.locator('#rule-reference .reference-table:first-of-type tbody td:first-child').allTextContents()).includes('amount'),
      'beside the built-in fields',
    );
    await page.screenshot({ path: `${SHOTS}rule-own-fields.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], "the editor with the organization's fields: no serious or critical accessibility problem (axe-core)");
    await page.fill('#rule-name', 'Big baskets');
    await page.selectOption('#rule-action', 'review');
    await page.selectOption('#rule-status', 'active');
    await page.fill('#rule-expression', 'fields.basket_items >= 10.0 && !fields.three_ds');
    await page.waitForFunction(() => document.querySelector('#rule-check-summary')?.textContent === 'No problems: it can be saved.');
    await page.click('#rule-save');
    await page.waitForSelector('h1:text-is("Rule Big baskets")');
    rule = (await member(`/api/organizations/${org.id}/rules`)).data[0];
    t.match(rule, { name: 'Big baskets', status: 'active', expression: 'fields.basket_items >= 10.0 && !fields.three_ds' });

    // An organization with no fields of its own: where an owner declares them.
    const bare = await member('/api/organizations', 'POST', { name: 'Bare' });
    await goto(`#/rules/new?org=${bare.id}`, '#rule-editor');
    await page.click('#rule-reference summary');
    await page.waitForSelector('#rule-no-own-fields');
    t.match(await text('#rule-no-own-fields'), /^Bare has no fields of its own yet: an owner can declare them on the Fields page/);
    t.equal(await page.getAttribute('#rule-no-own-fields a', 'href'), `#/fields?org=${bare.id}`);
  });

  await t.test('retiring after a confirmation that says what it does; the retired ones on request; the name again', async (t) => {
    await goto(`#/fields?org=${org.id}`, '#field-table');
    const said: string[] = [];
    page.on('dialog', (d) => said.push(d.message()));
    await page.click('#field-retire-basket_items');
    await page.waitForFunction(() => /^Retired basket_items\./.test(document.querySelector('#field-status')?.textContent ?? ''));
    t.equal(said.length, 1, 'asked once');
    t.match(said[0], /^Retire the field basket_items\? Rules stop reading it/, 'the confirmation names the field');
    t.match(said[0], /values already stored with payments are kept/, 'says the stored values stay');
    t.match(said[0], /the name becomes free to declare again/, 'says the name is free again');
    t.match(said[0], /The running rule “Big baskets” names it\./, 'names the rule that reads it');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'field-list-title', 'focus goes to the list');
    t.same(
      (await rows()).map((r) => r[0]),
      ['email_domain', 'three_ds'],
      'no longer listed as declared',
    );
    t.equal(await text('#field-limits'), '2 of 50 fields, 1 of 5 keys.');
    t.match((await fields(true)).data[0], { name: 'basket_items', retired_by: String, retired_at: String }, 'retired in the API');

    await page.check('#fields-show-retired');
    await page.waitForFunction(() => location.hash.includes('retired=true') && document.querySelectorAll('#field-table tbody tr').length === 3);
    const all = await rows();
    t.same(
      all.map((r) => [r[0], r[5]!.replace(/ \d{4}.*/, ''), r[6]]),
      [
        ['basket_items', 'Retired', '—'],
        ['email_domain', 'Declared', 'Retire'],
        ['three_ds', 'Declared', 'Retire'],
      ],
      'the retired field among the others, with no Retire button',
    );
    t.ok(await page.isChecked('#fields-show-retired'), 'the choice is in the address, and the box says so');
    t.equal(await text('#field-limits'), '2 of 50 fields, 1 of 5 keys.', 'the retired field does not count');

    // Its name is free: declared again, as text this time.
    await declare('basket_items', 'string', false, 'Now the basket id');
    await page.waitForFunction(() => /^Declared basket_items \(string\)/.test(document.querySelector('#field-status')?.textContent ?? ''));
    await page.click('#field-table a:text-is("basket_items")');
    await page.waitForSelector('h1:text-is("Field basket_items")');
    t.equal(await text('#field-summary code'), 'fields.basket_items');
    t.equal(await text('#field-rules'), 'Big baskets (active)', 'the rules that name it, linked');
    t.equal(await page.getAttribute('#field-rules a', 'href'), `#/rules/${rule.id}?org=${org.id}`);
    const history = await page.locator('#field-history tbody tr').evaluateAll((trs) => trs.map((r) => [...r.children].map((c) => c.textContent ?? '')));
    t.same(
      history.map((r) => r[2]),
      ['Declared: number, described “Items in the basket”', 'Retired', 'Declared again: string, described “Now the basket id”'],
      'every change, oldest first',
    );
    t.ok(
      history.every((r) => /UTC$/.test(r[0]!) && r[1] === history[0]![1]),
      'each with when and by whom',
    );
    t.equal(await page.locator('#field-retire-basket_items').count(), 1, 'an owner may retire it from its page');
    t.same(await accessibilityProblems(page), [], "a field's page: no serious or critical accessibility problem (axe-core)");

    // A name never declared: the service's message and fix, no stack trace.
    await refused(404, async () => {
      await goto(`#/fields/nothing_here?org=${org.id}`, '.error');
    });
    t.match(await text('.error'), /No field named nothing_here declared in this organization\..*declare it first/);
  });

  await t.test('at a phone’s width nothing scrolls sideways', async (t) => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [hash, selector, shot] of [
      [`#/fields?org=${org.id}&retired=true`, '#field-table', 'fields-phone'],
      [`#/fields/basket_items?org=${org.id}`, '#field-history', 'field-phone'],
    ] as const) {
      await goto(hash, selector);
      t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${shot}: no sideways scrolling at 390 px`);
      await page.screenshot({ path: `${SHOTS}${shot}.png`, fullPage: true });
      t.same(await accessibilityProblems(page), [], `${shot}: no serious or critical accessibility problem at 390 px (axe-core)`);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  await t.test('a member sees the fields and their history, with no control to change them', async (t) => {
    const memberPage = await watchedPage(page.context().browser()!, problems);
    await server.signIn(memberPage, { sub: 'field-member', email: 'member@example.com', name: 'Mem Ber' });
    await memberPage.waitForSelector('#who');
    const me = await memberApi(memberPage)('/api/auth/me');
    await server.s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [org.id, me.user.id]);
    await goto(`#/fields?org=${org.id}`, '#field-table', memberPage);
    t.same(
      (await rows(memberPage)).map((r) => r.slice(0, 3)),
      [
        ['basket_items', 'string', 'no'],
        ['email_domain', 'string', 'yes'],
        ['three_ds', 'boolean', 'no'],
      ],
      'the member sees the fields',
    );
    t.match(await text('#field-limits', memberPage), /^3 of 50 fields, 1 of 5 keys\. Only owners declare and retire fields\.$/);
    t.equal(await memberPage.locator('#field-declare').count(), 0, 'no form to declare one');
    t.equal(await memberPage.locator('[id^="field-retire-"]').count(), 0, 'no Retire button');
    t.equal(await memberPage.locator('#field-table th').count(), 5, 'no Retire column');
    t.same(await accessibilityProblems(memberPage), [], "a member's view: no serious or critical accessibility problem (axe-core)");

    await memberPage.click('#field-table a:text-is("basket_items")');
    await memberPage.waitForSelector('#field-history');
    t.equal(await memberPage.locator('#field-history tbody tr').count(), 3, "the field's history");
    t.equal(await memberPage.locator('[id^="field-retire-"]').count(), 0, 'and no Retire button there');

    await goto(`#/rules/new?org=${org.id}`, '#rule-editor', memberPage);
    await memberPage.click('#rule-reference summary');
    await memberPage.waitForSelector('#rule-own-fields table');
    t.same(
      await memberPage.locator('#rule-own-fields tbody td:first-child').allTextContents(),
      ['fields.basket_items', 'fields.email_domain', 'field_history.email_domain', 'fields.three_ds'],
      "the editor lists the organization's fields for a member too",
    );
    await memberPage.close();
  });

  await t.test('an owner retires a field from its page', async (t) => {
    await goto(`#/fields/three_ds?org=${org.id}`, '#field-retire-three_ds');
    await page.click('#field-retire-three_ds');
    await page.waitForFunction(() => /^Retired three_ds\./.test(document.querySelector('#field-status')?.textContent ?? ''));
    t.match(await text('#field-state'), /^Retired: rules no longer read it/);
    t.equal(await page.locator('#field-retire-three_ds').count(), 0, 'no Retire button once retired');
    t.same((await page.locator('#field-history tbody td:nth-child(3)').allTextContents()).at(-1), 'Retired', 'the history says so');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'field-history-title', 'focus goes to the history');
  });

  t.same(problems, [], 'no console errors');
});
