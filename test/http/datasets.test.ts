// Dataset endpoints through the real app on each storage back end: upload as text/csv and as a
// multipart form, the validation answer (201, or 422 with per-column problems and advice), a
// mapping that fixes missing columns, preview, delete, the size and row limits (a file in a form
// too: refused, never cut at the limit), a form the parser cannot read (400), empty and binary
// files (the reference says a body of one character at least, a form with its file), expiry with a
// short retention (410), and files stored under random names only. A file that needs mapping gets
// a suggested mapping, and its preview a few values per header.

import t from 'tap';
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backends, start, tempDir } from '../support/server.ts';

const GOOD =
  '\uFEFFtransaction_id,timestamp,amount,customer_id,merchant_id,location,payment_type,label\r\nT1,2026-01-01T10:00:00Z,12.50,C000001,"Shop, Inc",Lisbon,wallet,0\r\nT2,2026-01-01T10:05:00Z,800,C000002,M00002,Porto,card_not_present,1\r\n';

function multipart(name: string, content: string | Buffer): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----test${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

for (const backend of backends()) {
  t.test(`datasets on ${backend.name}`, async (t) => {
    const dataDir = tempDir('data-');
    const running = await start({ backend, dataDir, overrides: { MAX_UPLOAD_MB: 1, MAX_DATASET_ROWS: 50, UPLOAD_RATE_PER_MINUTE: 1000 } });
    t.teardown(() => running.close());
    const app = running.app;
    const upload = (body: string | Buffer, query = '') =>
      app.inject({ method: 'POST', url: `/api/datasets/upload${query}`, payload: body, headers: { 'content-type': 'text/csv' } });
    const files = () => readdirSync(join(dataDir, 'uploads'));
    // The uploads themselves (a valid one also has its parsed rows beside it: columns.ts).
    const uploads = () => files().filter((f) => f.endsWith('.csv'));

    await t.test('a good file as text/csv: 201 with the validation', async (t) => {
      const res = await upload(GOOD, '?filename=../../etc/passwd');
      t.equal(res.statusCode, 201, res.body);
      const d = res.json();
      t.match(d.id, /^ds_[\w-]{20,}$/);
      t.equal(d.rows, 2);
      t.equal(d.valid, true);
      t.equal(d.has_labels, true);
      t.equal(d.original_name, '.._.._etc_passwd', 'the sent name is kept as text only');
      t.ok(
        uploads().every((f) => /^[a-f0-9]{32}\.csv(\.cols)?$/.test(f)),
        'stored under random names (and the parsed rows kept beside a valid one)',
      );
      t.notOk(existsSync(join(dataDir, 'etc')), 'no path built from the sent name');
      const again = await app.inject({ method: 'GET', url: `/api/datasets/${d.id}` });
      t.equal(again.statusCode, 200);
      t.equal(again.json().id, d.id);
      const preview = (await app.inject({ method: 'GET', url: `/api/datasets/${d.id}/preview?rows=5` })).json();
      t.equal(preview.rows.length, 2);
      t.same([preview.rows[0].merchant_id, preview.rows[0].amount, preview.rows[0].time], ['Shop, Inc', 12.5, '2026-01-01T10:00:00.000Z']);
      t.equal(preview.rows[1].label, 1);
    });

    await t.test('multipart upload', async (t) => {
      const form = multipart('mine.csv', GOOD);
      const res = await app.inject({ method: 'POST', url: '/api/datasets/upload', payload: form.payload, headers: form.headers });
      t.equal(res.statusCode, 201, res.body);
      t.equal(res.json().original_name, 'mine.csv');
    });

    await t.test('a file name in any script is kept, and names the download', async (t) => {
      // A browser's form sends the name as raw UTF-8 in the part's header.
      const form = multipart('transações 東京.csv', GOOD);
      const raw = await app.inject({ method: 'POST', url: '/api/datasets/upload', payload: form.payload, headers: form.headers });
      t.equal(raw.statusCode, 201, raw.body);
      t.equal(raw.json().original_name, 'transações 東京.csv', 'a raw UTF-8 name in a form');
      const queried = await upload(GOOD, `?filename=${encodeURIComponent('Müller & Söhne.csv')}`);
      t.equal(queried.json().original_name, 'Müller _ Söhne.csv', 'a percent-encoded name in the query (punctuation other than . - _ becomes _)');
      const extended = app.inject({
        method: 'POST',
        url: '/api/datasets/upload',
        headers: form.headers,
        payload: Buffer.from(form.payload.toString('latin1').replace(/filename="[^"]*"/, `filename*=UTF-8''${encodeURIComponent('ñandú.csv')}`), 'latin1'),
      });
      t.equal((await extended).json().original_name, 'ñandú.csv', "RFC 5987's filename*");
      const job = await app.inject({ method: 'POST', url: '/api/datasets/score', payload: { dataset_id: raw.json().id } });
      t.equal(job.statusCode, 202, job.body);
      for (let i = 0; i < 100 && (await app.inject({ url: `/api/jobs/${job.json().id}` })).json().status !== 'succeeded'; i++)
        await new Promise((r) => setTimeout(r, 100));
      const download = await app.inject({ url: `/api/jobs/${job.json().id}/download` });
      t.equal(download.statusCode, 200);
      t.equal(
        download.headers['content-disposition'],
        `attachment; filename="transa__es __.scored.csv"; filename*=UTF-8''${encodeURIComponent('transações 東京.scored.csv')}`,
        'an ASCII name for old clients and the UTF-8 one (RFC 6266)',
      );
    });

    await t.test('missing columns: 422 with the dataset kept, then a mapping fixes it', async (t) => {
      const res = await upload('Amount,nameOrig,nameDest\n10,C1,M1\n20,C2,M2\n');
      t.equal(res.statusCode, 422);
      const body = res.json().detail;
      t.equal(body.reason, 'validation_failed');
      t.match(body.message, /missing required columns customer_id, merchant_id/);
      t.match(body.fix, /mapping/);
      t.same(body.validation.missing_required, ['customer_id', 'merchant_id']);
      t.same(body.validation.suggested_mapping, { amount: 'Amount', customer_id: 'nameOrig', merchant_id: 'nameDest' }, 'a suggested mapping from the headers');
      t.match(body.fix, /suggested: \{"amount":"Amount","customer_id":"nameOrig","merchant_id":"nameDest"\}/);
      const id = body.dataset_id;
      const before = (await app.inject({ method: 'GET', url: `/api/datasets/${id}/preview` })).json();
      t.same(before.samples, { Amount: ['10', '20'], nameOrig: ['C1', 'C2'], nameDest: ['M1', 'M2'] }, 'values per header, before any mapping');
      t.same(before.suggested_mapping, body.validation.suggested_mapping);
      const fixed = await app.inject({
        method: 'POST',
        url: `/api/datasets/${id}/validate`,
        payload: { mapping: { customer_id: 'nameOrig', merchant_id: 'nameDest' } },
      });
      t.equal(fixed.statusCode, 200, fixed.body);
      t.equal(fixed.json().valid, true);
      t.same(fixed.json().mapping, { customer_id: 'nameOrig', merchant_id: 'nameDest' });
      const preview = (await app.inject({ method: 'GET', url: `/api/datasets/${id}/preview` })).json();
      t.equal(preview.rows[1].customer_id, 'C2', 'the preview uses the stored mapping');
      const badMapping = await app.inject({ method: 'POST', url: `/api/datasets/${id}/validate`, payload: { mapping: { card_number: 'x' } } });
      t.equal(badMapping.statusCode, 422);
      t.equal(badMapping.json().detail.reason, 'validation_failed');
    });

    await t.test('non-numeric and negative amounts: rows and advice', async (t) => {
      const res = await upload('amount,customer_id,merchant_id\n"$1,200",C1,M1\n-3,C2,M2\n5,C3,M3\n');
      t.equal(res.statusCode, 422);
      const d = res.json().detail;
      t.match(d.message, /amount is not a number in 1 row \(first: 1\)/);
      t.match(d.fix, /Remove currency symbols and thousands separators/);
      const negative = d.validation.problems.find((p: { message: string }) => p.message === 'is negative');
      t.same(negative.rows, [2]);
    });

    await t.test('empty and binary files: 422, nothing kept', async (t) => {
      const before = uploads().length;
      const empty = await upload('');
      t.equal(empty.statusCode, 422);
      t.match(empty.json().detail.message, /empty/);
      const binary = await upload(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
      t.equal(binary.statusCode, 422);
      t.match(binary.json().detail.message, /not a text CSV/);
      t.equal(uploads().length, before, 'their files were removed');
    });

    await t.test('the reference says what an upload needs, and an upload without it is refused as it says', async (t) => {
      const body = (await app.inject({ url: '/api/docs/json' })).json().paths['/api/datasets/upload'].post.requestBody;
      t.equal(body.required, true, 'a body is required');
      t.equal(body.content['text/csv'].schema.minLength, 1, 'a CSV of one character at least: an empty one is outside the schema');
      t.same(body.content['multipart/form-data'].schema.required, ['file'], 'a form with its file');
      t.equal(body.content['multipart/form-data'].schema.properties.file.minLength, 1, 'a file of one byte at least');
      const boundary = 'no-file-here';
      const noFile = await app.inject({
        method: 'POST',
        url: '/api/datasets/upload',
        payload: `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--${boundary}--\r\n`,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      t.equal(noFile.statusCode, 422, 'a form without its file: 422');
      t.same(noFile.json().detail.fields, [{ path: 'file', message: 'missing' }]);
      const emptyFile = await app.inject({ method: 'POST', url: '/api/datasets/upload', ...multipart('empty.csv', '') });
      t.equal(emptyFile.statusCode, 422, 'an empty file in a form: 422');
      const none = await app.inject({ method: 'POST', url: '/api/datasets/upload' });
      t.equal(none.statusCode, 415, 'no body at all: 415, with the types it takes');
      t.equal(none.json().detail.reason, 'unsupported_media_type');
    });

    await t.test('a file name at the length limit, with an empty mapping: a 4xx with its reason, never a 500', async (t) => {
      // Mapping {}, a 255-character name and an empty body together: a request the conformance
      // run's generator makes, answered as the client's error.
      const name = '0'.repeat(255);
      const empty = await app.inject({
        method: 'POST',
        url: `/api/datasets/upload?mapping=%7B%7D&filename=${name}`,
        payload: '',
        headers: { 'content-type': 'text/csv' },
      });
      t.equal(empty.statusCode, 422, empty.body.slice(0, 200));
      t.equal(empty.json().detail.reason, 'validation_failed');
      t.match(empty.json().detail.message, /The file is empty\./);
      const good = await app.inject({
        method: 'POST',
        url: `/api/datasets/upload?mapping=%7B%7D&filename=${name}`,
        payload: 'amount,customer_id,merchant_id\n1,c,m\n',
        headers: { 'content-type': 'text/csv' },
      });
      t.equal(good.statusCode, 201, 'the same name with a good file is kept');
      const kept = good.json().original_name as string;
      t.ok(kept.length > 0 && kept.length <= 200 && name.startsWith(kept), `under its name, shortened to ${kept.length} characters`);
      const longer = await app.inject({
        method: 'POST',
        url: `/api/datasets/upload?filename=${'0'.repeat(256)}`,
        payload: 'amount,customer_id,merchant_id\n1,c,m\n',
        headers: { 'content-type': 'text/csv' },
      });
      t.equal(longer.statusCode, 422, 'a longer name: refused by its declared length');
      t.equal(longer.json().detail.reason, 'validation_failed');
    });

    await t.test('limits: size (413) and rows (400 too_many_rows)', async (t) => {
      const before = uploads().length;
      const big = await upload(`amount,customer_id,merchant_id\n${'1,C,M\n'.repeat(200_000)}`);
      t.equal(big.statusCode, 413);
      t.equal(big.json().detail.reason, 'payload_too_large');
      const many = await upload(`amount,customer_id,merchant_id\n${'1,C,M\n'.repeat(51)}`);
      t.equal(many.statusCode, 400);
      t.equal(many.json().detail.reason, 'too_many_rows');
      t.equal(uploads().length, before, 'neither file was kept');
      const wrongType = await app.inject({ method: 'POST', url: '/api/datasets/upload', payload: { a: 1 } });
      t.equal(wrongType.statusCode, 415);
      // The same limit for a file in a form: refused, never cut at the limit and kept.
      const bigForm = multipart('big.csv', `amount,customer_id,merchant_id\n${'1,C,M\n'.repeat(200_000)}`);
      const bigPart = await app.inject({ method: 'POST', url: '/api/datasets/upload', payload: bigForm.payload, headers: bigForm.headers });
      t.equal(bigPart.statusCode, 413, bigPart.body.slice(0, 300));
      t.equal(bigPart.json().detail.reason, 'payload_too_large');
      t.equal(uploads().length, before, "nor the form's");
    });

    await t.test('a form the parser cannot read: 400 with a reason, nothing kept', async (t) => {
      const before = uploads().length;
      const form = multipart('mine.csv', GOOD);
      const noBoundary = await app.inject({
        method: 'POST',
        url: '/api/datasets/upload',
        payload: form.payload,
        headers: { 'content-type': 'multipart/form-data' },
      });
      t.equal(noBoundary.statusCode, 400, noBoundary.body.slice(0, 300));
      t.equal(noBoundary.json().detail.reason, 'bad_request');
      t.match(noBoundary.json().detail.fix, /multipart\/form-data/);
      t.equal(uploads().length, before, 'nothing kept');
    });

    await t.test('delete: the file goes at once, then 404', async (t) => {
      const id = (await upload(GOOD)).json().id;
      const before = uploads().length;
      const kept = () => files().filter((f) => f.endsWith('.cols')).length;
      const keptBefore = kept();
      const del = await app.inject({ method: 'DELETE', url: `/api/datasets/${id}` });
      t.equal(del.statusCode, 204);
      t.equal(uploads().length, before - 1);
      t.equal(kept(), keptBefore - 1, 'its parsed rows went with it');
      t.equal((await app.inject({ method: 'GET', url: `/api/datasets/${id}` })).statusCode, 404);
      t.equal((await app.inject({ method: 'GET', url: '/api/datasets/ds_nothing' })).json().detail.reason, 'not_found');
    });
  });

  t.test(`retention on ${backend.name}: expired uploads are swept and answer 410`, async (t) => {
    const dataDir = tempDir('data-');
    const running = await start({ backend, dataDir, overrides: { UPLOAD_RETENTION_HOURS: 1 / 3600 } }); // one second
    t.teardown(() => running.close());
    const res = await running.app.inject({ method: 'POST', url: '/api/datasets/upload', payload: GOOD, headers: { 'content-type': 'text/csv' } });
    const id = res.json().id;
    t.same(
      readdirSync(join(dataDir, 'uploads'))
        .map((f) => f.replace(/^[a-f0-9]{32}/, ''))
        .sort(),
      ['.csv', '.csv.cols'],
      'the upload and its parsed rows',
    );
    await new Promise((r) => setTimeout(r, 1200));
    // Files no dataset owns (a process that died between storing an upload and recording it, a
    // half-written copy of parsed rows): removed once an hour old, not before.
    const uploadsDir = join(dataDir, 'uploads');
    const stray = ['0123456789abcdef0123456789abcdef.csv', '0123456789abcdef0123456789abcdef.csv.cols.partial'];
    for (const name of [...stray, 'fedcba9876543210fedcba9876543210.csv']) writeFileSync(join(uploadsDir, name), 'amount\n1\n');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const name of stray) utimesSync(join(uploadsDir, name), twoHoursAgo, twoHoursAgo);
    const swept = await running.service.sweepExpired();
    t.ok(swept === 0 || swept === 1, `the expired dataset, unless the periodic sweep took it first (${swept})`);
    t.same(readdirSync(uploadsDir), ['fedcba9876543210fedcba9876543210.csv'], 'the expired upload and the hour-old strays are gone; a recent stray waits');
    const gone = await running.app.inject({ method: 'GET', url: `/api/datasets/${id}` });
    t.equal(gone.statusCode, 410);
    t.equal(gone.json().detail.reason, 'upload_expired');
    t.equal((await running.app.inject({ method: 'GET', url: `/api/datasets/${id}/preview` })).statusCode, 410);
  });
}
