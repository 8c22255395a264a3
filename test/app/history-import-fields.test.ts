// The organization's own fields in history imports and dataset scoring, over the API on each
// storage back end: an upload's mapping maps its columns onto declared fields (`mapping.fields`);
// an import stores them with each row, converted to the declared types (a number, yes/no and
// true/false any case, text trimmed, an empty cell absent), shown in the transaction's record, and
// its key values filter the listing on both surfaces. Refused when queued, naming the mapping entry:
// a field the organization has not declared (another organization's declarations do not count),
// and scoring for no organization; a field retired by the time the job runs fails it. Refused at upload: a mapped header the file does not have. The
// job fails with nothing stored when a cell is of the wrong type, too long, a card number or an IP
// address (whatever the field's type), naming the row and the column, never the value: not in the
// job's error, the HTTP log, the service's log or the database. Scoring the dataset checks the
// cells the same way, and its results carry no field.

import { Writable } from 'node:stream';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { backends } from '../support/server.ts';
import { startLive, type Member, type Organization } from '../support/accounts.ts';

const DAY = 86_400_000;

interface JobView {
  id: string;
  kind: string;
  status: string;
  error?: string;
  organization_id: string | null;
  summary: Record<string, unknown> | null;
}

for (const backend of backends()) {
  t.test(`fields in history imports on ${backend.name}`, async (t) => {
    const httpLog: string[] = [];
    const serviceLog: string[] = [];
    const live = await startLive({
      backend,
      overrides: { MAX_JOBS_PER_ORG_PER_DAY: 100, UPLOAD_RATE_PER_MINUTE: 1000 },
      startOptions: { log: (m) => serviceLog.push(m) },
      logger: {
        level: 'info',
        stream: new Writable({
          write(chunk, _enc, cb) {
            httpLog.push(chunk.toString());
            cb();
          },
        }),
      },
    });
    t.teardown(() => live.close());
    const { app } = live.s;

    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const upload = (member: Member, csv: string, orgId: string | undefined, mapping?: unknown): Promise<LightMyRequestResponse> =>
      app.inject({
        method: 'POST',
        url: `/api/datasets/upload?${orgId ? `organization_id=${orgId}&` : ''}${mapping ? `mapping=${encodeURIComponent(JSON.stringify(mapping))}` : ''}`,
        headers: { ...member.headers, 'content-type': 'text/csv' },
        payload: csv,
      });
    const importInto = (org: Organization, datasetId: string) =>
      app.inject({ method: 'POST', url: `/api/organizations/${org.id}/history-imports`, headers: org.owner.headers, payload: { dataset_id: datasetId } });
    const scoreIt = (member: Member, body: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/api/datasets/score', headers: member.headers, payload: body });
    const finish = async (id: string, member: Member): Promise<JobView> => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const j = (await app.inject({ url: `/api/jobs/${id}`, headers: member.headers })).json() as JobView;
        if (j.status === 'succeeded' || j.status === 'failed') return j;
        if (Date.now() > deadline) throw new Error(`job ${id} did not finish: ${JSON.stringify(j)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const declare = async (org: Organization, body: Record<string, unknown>) => {
      const res = await app.inject({ method: 'POST', url: `/api/organizations/${org.id}/fields`, headers: org.owner.headers, payload: body });
      if (res.statusCode !== 201) throw new Error(`declaring ${JSON.stringify(body)}: ${res.body}`);
    };
    const record = (org: Organization, id: string) => app.inject({ url: `/api/v1/transactions/${id}`, headers: { authorization: `Bearer ${org.key}` } });
    const listed = async (org: Organization, query: string) =>
      (
        (await app.inject({ url: `/api/v1/transactions?${query}`, headers: { authorization: `Bearer ${org.key}` } })).json().data as {
          transaction_id: string;
        }[]
      ).map((r) => r.transaction_id);
    const stored = async (org: Organization) =>
      (await live.s.service.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE organization_id = $1`, [org.id]))[0]!.n;
    /** The declarations every organization here makes: two string keys, a number, a boolean, and a
     *  string that is no key. */
    const declareAll = async (org: Organization) => {
      await declare(org, { name: 'email_domain', type: 'string', key: true });
      await declare(org, { name: 'device', type: 'string', key: true });
      await declare(org, { name: 'basket_items', type: 'number' });
      await declare(org, { name: 'three_ds', type: 'boolean' });
      await declare(org, { name: 'note', type: 'string' });
    };
    const HEADER = 'transaction_id,timestamp,amount,customer_id,merchant_id,label,Email Domain,Device,items,3DS,memo';
    const MAPPING = { fields: { email_domain: 'Email Domain', device: 'device', basket_items: 'items', three_ds: '3DS', note: 'memo' } };

    await t.test('mapped fields are stored with each row, as their declared types', async (t) => {
      const acme = await live.organization('Acme');
      await declareAll(acme);
      const rows = [
        ['f-1', at(5 * DAY), 10, 'c-1', 'm-1', 0, 'example.com', 'dev-a', '3', 'yes', 'first'],
        ['f-2', at(4 * DAY), 11, 'c-2', 'm-1', 1, 'mail.example', 'dev-b', '2.5', 'FALSE', ''],
        ['f-3', at(3 * DAY), 12, 'c-1', 'm-2', 0, '', 'dev-a', '', '1', ''],
        ['f-4', at(2 * DAY), 13, 'c-3', 'm-2', '', '', '', '', '', ''],
        ['f-5', at(1 * DAY), 14, 'c-3', 'm-2', 0, '  spaced.example  ', 'DEV-A', '1e2', 'No', '"quoted, with a comma"'],
      ];
      const csv = `${HEADER}\n${rows.map((r) => r.join(',')).join('\n')}\n`;
      const up = await upload(acme.owner, csv, acme.id, MAPPING);
      t.equal(up.statusCode, 201, up.body.slice(0, 400));
      t.same(up.json().mapping, MAPPING, 'the dataset keeps the mapping with its fields');
      t.same(up.json().validation.missing_fields, [], 'every mapped header found (Device for device: case is ignored, as for our columns)');

      const q = await importInto(acme, up.json().id);
      t.equal(q.statusCode, 202, q.body);
      const done = await finish(q.json().id, acme.owner);
      t.equal(done.status, 'succeeded', done.error ?? '');
      t.equal(done.summary?.imported, 5);

      const fieldsOf = async (id: string) => (await record(acme, id)).json().fields;
      t.same(await fieldsOf('f-1'), { email_domain: 'example.com', device: 'dev-a', basket_items: 3, three_ds: true, note: 'first' }, 'each as its type');
      t.same(
        await fieldsOf('f-2'),
        { email_domain: 'mail.example', device: 'dev-b', basket_items: 2.5, three_ds: false },
        'FALSE is false; an empty cell is absent',
      );
      t.same(await fieldsOf('f-3'), { device: 'dev-a', three_ds: true }, '1 is true');
      t.same(await fieldsOf('f-4'), {}, 'a row with every cell empty carries none');
      t.same(
        await fieldsOf('f-5'),
        { email_domain: 'spaced.example', device: 'DEV-A', basket_items: 100, three_ds: false, note: 'quoted, with a comma' },
        'text trimmed and kept as written otherwise; 1e2 is 100; No is false',
      );
      t.match((await record(acme, 'f-1')).json(), { source: 'import', decision: null }, 'an imported record');

      t.same(await listed(acme, 'field.device=dev-a'), ['f-3', 'f-1'], 'key values filter the listing, newest first (DEV-A is another value)');
      t.same(await listed(acme, 'field.email_domain=example.com'), ['f-1']);
      t.same(await listed(acme, 'field.email_domain=spaced.example'), ['f-5'], 'the trimmed value is the key');
      const dashboard = await app.inject({ url: `/api/organizations/${acme.id}/transactions?field.device=dev-b`, headers: acme.owner.headers });
      t.same(
        dashboard.json().data.map((r: { transaction_id: string }) => r.transaction_id),
        ['f-2'],
        "and the dashboard's listing",
      );
      t.equal(
        (await app.inject({ url: '/api/v1/transactions?field.note=first', headers: { authorization: `Bearer ${acme.key}` } })).statusCode,
        422,
        'note is no key',
      );

      // Scoring the same dataset: the cells are checked as an import checks them, and read no further.
      const job = await scoreIt(acme.owner, { dataset_id: up.json().id });
      t.equal(job.statusCode, 202, job.body);
      const scored = await finish(job.json().id, acme.owner);
      t.equal(scored.status, 'succeeded', scored.error ?? '');
      t.equal(scored.organization_id, acme.id, "a job of the organization's dataset is the organization's");
      const page = (await app.inject({ url: `/api/jobs/${scored.id}/result`, headers: acme.owner.headers })).json();
      t.equal(page.rows.length, 5);
      t.notOk(JSON.stringify(page.rows).includes('example.com'), 'the results carry no field');
    });

    await t.test('refused when queued: a field the organization has not declared, scoring for no organization', async (t) => {
      const shop = await live.organization('Shop');
      const other = await live.organization('Other');
      // Other declares loyalty_tier; Shop declares only device.
      await declare(other, { name: 'loyalty_tier', type: 'string' });
      await declare(shop, { name: 'device', type: 'string', key: true });
      const csv = `transaction_id,timestamp,amount,customer_id,merchant_id,tier,device\nr-1,${at(DAY)},5,c,m,gold,dev-a\n`;
      const up = await upload(shop.owner, csv, shop.id, { fields: { device: 'device', loyalty_tier: 'tier' } });
      t.equal(up.statusCode, 201, 'the upload validates: a mapping names headers, the job reads declarations');

      const res = await importInto(shop, up.json().id);
      t.equal(res.statusCode, 422, res.body);
      const detail = res.json().detail;
      t.equal(detail.reason, 'validation_failed');
      t.same(
        detail.fields.map((f: { path: string }) => f.path),
        ['mapping.fields.loyalty_tier'],
        "the mapping entry named (Other's declaration does not count for Shop)",
      );
      t.match(detail.fields[0].message, /declare it first/);
      t.match(detail.message, /column "tier" onto fields\.loyalty_tier, which Shop has not declared/);
      t.match(detail.fix, /Declare it first \(POST \/api\/organizations\/.*\/fields/);
      const jobs = (await app.inject({ url: `/api/jobs?organization_id=${shop.id}`, headers: shop.owner.headers })).json().jobs;
      t.same(jobs, [], 'nothing queued');
      const scoring = await scoreIt(shop.owner, { dataset_id: up.json().id });
      t.equal(scoring.statusCode, 422, 'scoring it is refused the same way');
      t.same(
        scoring.json().detail.fields.map((f: { path: string }) => f.path),
        ['mapping.fields.loyalty_tier'],
      );

      // Declared now: queued, and imported.
      await declare(shop, { name: 'loyalty_tier', type: 'string' });
      const ok = await finish((await importInto(shop, up.json().id)).json().id, shop.owner);
      t.equal(ok.status, 'succeeded', ok.error ?? '');
      t.same((await record(shop, 'r-1')).json().fields, { device: 'dev-a', loyalty_tier: 'gold' });

      // Retired after the import was queued: the job, run again (as after its server stopped),
      // fails before reading a row.
      t.equal((await app.inject({ method: 'DELETE', url: `/api/organizations/${shop.id}/fields/loyalty_tier`, headers: shop.owner.headers })).statusCode, 200);
      await live.s.service.db.query(
        `UPDATE jobs SET status = 'queued', stage = 'queued again', progress = 0, claimed_by = NULL, result = NULL, finished_at = NULL WHERE id = $1`,
        [ok.id],
      );
      void live.s.service.jobs!.poll();
      const again = await finish(ok.id, shop.owner);
      t.equal(again.status, 'failed', 'a field retired since the import was queued fails the job');
      t.match(again.error, /column "tier" onto fields\.loyalty_tier, which the organization does not declare .*nothing was imported/);

      // A member's own upload (no organization) mapping fields, scored for no organization.
      const own = await upload(shop.owner, csv, undefined, { fields: { device: 'device' } });
      t.equal(own.statusCode, 201, own.body);
      const mine = await scoreIt(shop.owner, { dataset_id: own.json().id });
      t.equal(mine.statusCode, 422, "fields are an organization's own: a job of no organization is refused");
      t.match(mine.json().detail.message, /belongs to no organization/);
      t.same(
        mine.json().detail.fields.map((f: { path: string }) => f.path),
        ['mapping.fields.device'],
      );
      const forShop = await scoreIt(shop.owner, { dataset_id: own.json().id, organization_id: shop.id });
      t.equal(forShop.statusCode, 202, 'scored for the organization that declares it');
      t.equal((await finish(forShop.json().id, shop.owner)).status, 'succeeded');
    });

    await t.test('refused at upload: a mapped header the file does not have, a bad field name', async (t) => {
      const org = await live.organization('Mapper');
      const csv = `transaction_id,timestamp,amount,customer_id,merchant_id,device\nu-1,${at(DAY)},5,c,m,dev-a\n`;
      const up = await upload(org.owner, csv, org.id, { fields: { device: 'Device Hash' } });
      t.equal(up.statusCode, 422, 'a header that is not in the file');
      t.same(up.json().detail.validation.missing_fields, ['device']);
      t.match(up.json().detail.message, /no column for the mapped field fields\.device/);
      t.match(up.json().detail.fix, /columns_found/);
      const fixed = await app.inject({
        method: 'POST',
        url: `/api/datasets/${up.json().detail.dataset_id}/validate`,
        headers: org.owner.headers,
        payload: { mapping: { fields: { device: 'device' } } },
      });
      t.equal(fixed.statusCode, 200, `mapped to a header it has: valid (${fixed.body.slice(0, 200)})`);
      const bad = await upload(org.owner, csv, org.id, { fields: { 'Device-Hash': 'device' } });
      t.equal(bad.statusCode, 422);
      t.same(
        bad.json().detail.fields.map((f: { path: string }) => f.path),
        ['mapping.fields.Device-Hash'],
        'a name that cannot be a field',
      );
    });

    await t.test('the job fails with nothing stored, naming the row and the column, never the value', async (t) => {
      const careful = await live.organization('Careful');
      await declareAll(careful);
      const refusedValues: string[] = [];
      const failing = async (what: string, cells: string[], pattern: RegExp, value?: string) => {
        if (value) refusedValues.push(value);
        const line = (id: string, c: string[]) => [id, at(DAY), 5, 'c', 'm', 0, ...c].join(',');
        const csv = `${HEADER}\n${line('first-ok', ['example.com', 'dev-a', '1', 'yes', ''])}\n${line('bad', cells)}\n`;
        const up = await upload(careful.owner, csv, careful.id, MAPPING);
        t.equal(up.statusCode, 201, `${what}: the upload validates`);
        const q = await importInto(careful, up.json().id);
        t.equal(q.statusCode, 202, `${what}: queued (only the job reads every row)`);
        const j = await finish(q.json().id, careful.owner);
        t.equal(j.status, 'failed', `${what}: the job fails`);
        t.match(j.error, pattern, `${what}: ${j.error}`);
        t.match(j.error, /nothing was imported/);
        if (value) t.notOk(j.error!.includes(value) || j.error!.includes(value.replace(/[ -]/g, '')), `${what}: the value is not in the error`);
        t.equal(await stored(careful), 0, `${what}: nothing stored, not even the row before it`);
        return up.json().id as string;
      };
      await failing(
        'a number field that is not a number',
        ['x.example', 'dev-a', 'three', 'yes', ''],
        /^row 2, column "items" \(fields\.basket_items\) is not a number, the field's declared type/,
      );
      await failing(
        'a number with a thousands separator',
        ['x.example', 'dev-a', '"1,000"', 'yes', ''],
        /^row 2, column "items" \(fields\.basket_items\) is not a number/,
      );
      await failing(
        'a boolean field that is not one',
        ['x.example', 'dev-a', '2', 'maybe', ''],
        /^row 2, column "3DS" \(fields\.three_ds\) is not true or false/,
      );
      await failing(
        'text over 500 characters',
        ['x.example', 'dev-a', '2', 'yes', 'y'.repeat(501)],
        /^row 2, column "memo" \(fields\.note\) is longer than 500 characters/,
      );
      const cardDataset = await failing(
        'a card number in a string field',
        ['4111 1111 1111 1111', 'dev-a', '2', 'yes', ''],
        /^card_number_refused: row 2, column "Email Domain" \(fields\.email_domain\) holds a card number/,
        '4111 1111 1111 1111',
      );
      await failing(
        'a card number in a boolean field',
        ['x.example', 'dev-a', '2', '5555555555554444', ''],
        /^card_number_refused: row 2, column "3DS" \(fields\.three_ds\)/,
        '5555555555554444',
      );
      await failing(
        'an IPv4 address',
        ['x.example', '203.0.113.77', '2', 'yes', ''],
        /^ip_address_refused: row 2, column "Device" \(fields\.device\) holds an IP address/,
        '203.0.113.77',
      );
      await failing(
        'an IPv6 address',
        ['x.example', 'dev-a', '2', 'yes', '2001:db8::77'],
        /^ip_address_refused: row 2, column "memo" \(fields\.note\)/,
        '2001:db8::77',
      );

      // Scoring the file with the card number fails the same way, before anything is scored.
      const scoring = await finish((await scoreIt(careful.owner, { dataset_id: cardDataset })).json().id, careful.owner);
      t.equal(scoring.status, 'failed');
      t.match(scoring.error, /^card_number_refused: row 2, column "Email Domain" \(fields\.email_domain\) holds a card number.*nothing was scored/);
      t.notOk(scoring.error!.includes('4111'), 'the value is not in its error either');

      const logs = [...httpLog, ...serviceLog].join('\n');
      t.ok(httpLog.length > 0, `the HTTP log was read (${httpLog.length} lines)`);
      for (const v of refusedValues) {
        t.notOk(logs.includes(v) || logs.includes(v.replace(/[ -]/g, '')), `${v} is in no log`);
        const [{ n }] = await live.s.service.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM transactions WHERE fields::text LIKE $1 OR array_to_string(field_keys, ',') LIKE $1`,
          [`%${v}%`],
        );
        t.equal(n, 0, `${v} is in no stored row`);
        const [{ j }] = await live.s.service.db.query<{ j: number }>(`SELECT count(*)::int AS j FROM jobs WHERE error LIKE $1 OR result::text LIKE $1`, [
          `%${v}%`,
        ]);
        t.equal(j, 0, `${v} is in no job`);
      }
    });
  });
}
