// History imports end to end on each storage back end: the built-in example into a test
// organization (on PostgreSQL when there is one) (every row, real progress seen while it runs, the summary, then a score that sees
// the imported customer and its evidence while another organization sees nothing; a live
// organization is refused it); a labelled upload (labels known at time plus the label delay, ids the
// organization had skipped, a job claimed again after a "crash" duplicating nothing, generated ids
// for a file without them, amounts kept to six decimal places); and every refusal: no timestamps, rows in the future or without a time
// (the job fails, nothing stored), another organization's dataset, expired, bad bodies, non-members,
// the daily quota. Result and download of an import point at its summary.

import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { backends } from '../support/server.ts';
import { liveFor, type Member, type Organization } from '../support/accounts.ts';
import { IMPORT_CHUNK_ROWS } from '../../src/jobs/history-import.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import type { HistoryImportSummary } from '../../src/contract/jobs.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const DAY = 86_400_000;

interface JobView {
  id: string;
  kind: string;
  status: string;
  stage: string;
  progress: number;
  error?: string;
  dataset_id: string | null;
  source?: string;
  organization_id: string | null;
  mode: string | null;
  summary: HistoryImportSummary | null;
}

const stores = backends();
for (const backend of stores) {
  // The built-in example (a quarter of a million rows) is imported on one back end only: PostgreSQL
  // when there is one, where large organizations live. It is the same use case as an upload, which
  // runs on both.
  const withExample = backend === stores.at(-1);
  t.test(`history imports on ${backend.name}`, async (t) => {
    const QUOTA = 12;
    const { live } = await liveFor(t, backend, { MAX_JOBS_PER_ORG_PER_DAY: QUOTA });
    const { app, service } = live.s;
    const labelDelay = service.labelDelay;

    const importInto = (org: Organization | { id: string }, member: Member | { headers: Record<string, string> }, body: unknown) =>
      app.inject({ method: 'POST', url: `/api/organizations/${org.id}/history-imports`, headers: member.headers, payload: body as object });
    const job = async (id: string, member: Member): Promise<JobView> => (await app.inject({ url: `/api/jobs/${id}`, headers: member.headers })).json();
    /** Polls a job quickly until it ends; every observation on the way. */
    const finish = async (id: string, member: Member, everyMs = 5): Promise<{ job: JobView; seen: JobView[] }> => {
      const seen: JobView[] = [];
      const deadline = Date.now() + 300_000;
      for (;;) {
        const j = await job(id, member);
        seen.push(j);
        if (j.status === 'succeeded' || j.status === 'failed') return { job: j, seen };
        if (Date.now() > deadline) throw new Error(`job ${id} did not finish: ${JSON.stringify(j)}`);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    };
    const asKey = (org: Organization, url: string) => app.inject({ url, headers: { authorization: `Bearer ${org.key}` } });
    const upload = async (member: Member, csv: string, orgId?: string): Promise<LightMyRequestResponse> =>
      app.inject({
        method: 'POST',
        url: `/api/datasets/upload${orgId ? `?organization_id=${orgId}` : ''}`,
        headers: { ...member.headers, 'content-type': 'text/csv' },
        payload: csv,
      });
    const refused = (t: Test, res: LightMyRequestResponse, status: number, reason: string, what: string) => {
      t.equal(res.statusCode, status, `${what}: ${status} (${res.body.slice(0, 300)})`);
      t.equal(res.json().detail?.reason, reason, `${what}: ${reason}`);
      t.type(res.json().detail?.fix, 'string', `${what}: says how to fix it`);
    };

    if (withExample)
      await t.test('the built-in example into a test organization', async (t) => {
        const acme = await live.organization('Acme');
        const other = await live.organization('Other');
        const records = (await service.sandbox.built()).history.transactions;
        const n = records.length;
        const last = n - 1;
        const customer = records.customerId(last);

        const queued = await importInto(acme, acme.owner, { example: true });
        t.equal(queued.statusCode, 202, queued.body);
        const q = queued.json() as JobView;
        t.match(q, { kind: 'history_import', source: 'example', dataset_id: null, mode: null, organization_id: acme.id });
        t.ok(['queued', 'running'].includes(q.status), 'answered at once, queued (or already claimed)');

        const { job: done, seen } = await finish(q.id, acme.owner, 100);
        t.equal(done.status, 'succeeded', done.error ?? '');
        t.equal(done.progress, 1);
        t.equal(done.stage, 'done');
        const between = seen.filter((j) => j.status === 'running' && j.stage === 'importing' && j.progress > 0 && j.progress < 1);
        t.ok(between.length > 0, `progress seen strictly between 0 and 1 while importing (${between.length} of ${seen.length} polls)`);
        // Within a stage (`features` starts again from 0 after `importing`).
        for (const stage of ['importing', 'features']) {
          const fractions = seen.filter((j) => j.stage === stage).map((j) => j.progress);
          t.ok(
            fractions.every((p, i) => i === 0 || p >= fractions[i - 1]!),
            `progress never goes back while ${stage}`,
          );
        }
        t.ok(
          between.every(
            (j) => Math.abs(j.progress * n - Math.round(j.progress * n)) < 1e-6 && Math.round(j.progress * n) % IMPORT_CHUNK_ROWS[backend.name] === 0,
          ),
          'progress is whole chunks of rows stored',
        );

        const fraud = service.sandbox.example.fraud_rows;
        t.same(
          { ...done.summary, first_time: undefined, last_time: undefined },
          { imported: n, skipped_existing: 0, labelled: n, fraud, first_time: undefined, last_time: undefined, featured: n },
          `all ${n} rows, ${fraud} of them fraud, each with its features as of its own time`,
        );
        // Counted as the rows were stored (none skipped): the same as counting them in the database.
        const counted = await organizationData(service.db, acme.id).transactions.importedBy(done.id);
        const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
        t.same(
          {
            imported: counted.imported,
            labelled: counted.labelled,
            fraud: counted.fraud,
            featured: counted.featured,
            first_time: iso(counted.first),
            last_time: iso(counted.last),
          },
          {
            imported: done.summary!.imported,
            labelled: done.summary!.labelled,
            fraud: done.summary!.fraud,
            featured: done.summary!.featured,
            first_time: done.summary!.first_time,
            last_time: done.summary!.last_time,
          },
          "the summary is the database's count of the job's rows",
        );
        const lastTime = Date.parse(done.summary!.last_time!);
        t.ok(Math.abs(lastTime - Date.now()) < 5 * 60_000, 'the newest example transaction is when the import ran');
        const span = lastTime - Date.parse(done.summary!.first_time!);
        t.ok(
          Math.abs(span - (records.time(last) - records.time(0))) <= 1,
          'the example keeps its span (every time shifted by the same amount; ISO times are whole milliseconds)',
        );
        t.comment(`${n} rows imported in ${(done as JobView & { elapsed_seconds: number }).elapsed_seconds} s`);

        const listed = (await app.inject({ url: `/api/jobs?organization_id=${acme.id}`, headers: acme.owner.headers })).json().jobs as JobView[];
        t.same(
          listed.map((j) => [j.id, j.kind]),
          [[q.id, 'history_import']],
          "listed with the organization's jobs",
        );
        for (const path of ['/result', '/download'])
          refused(t, await app.inject({ url: `/api/jobs/${q.id}${path}`, headers: acme.owner.headers }), 404, 'not_found', `an import's ${path}`);
        t.match((await app.inject({ url: `/api/jobs/${q.id}/result`, headers: acme.owner.headers })).json().detail.message, /history import/);

        // An imported record: its label known a label delay after it, from the import.
        const first = (await asKey(acme, `/api/v1/transactions/${records.transactionId(0)}`)).json();
        t.equal(first.source, 'import');
        t.equal(first.decision, null, 'never scored here: no decision');
        t.equal(first.evidence, null, 'and no evidence');
        t.same(first.outcome, {
          outcome: records.label(0) === 1 ? 'fraud' : 'legit',
          source: 'import',
          reported_at: new Date(Date.parse(first.time) + labelDelay).toISOString(),
          reported_by: `import:${q.id}`,
        });

        // The customer of the example's newest transaction, scored now: it has a past in Acme only.
        const probe = {
          amount: 42,
          customer_id: customer,
          merchant_id: records.merchantId(last),
          location: records.location(last),
          payment_type: records.paymentType(last),
        };
        // Its first score loads Acme's history (255,552 rows), which may outlast a score's deadline.
        const acmeProbe = await live.scoreLoaded(acme, { ...probe, transaction_id: 'acme-probe' });
        const inAcme = acmeProbe.json();
        t.ok(inAcme.entity_history[customer].prior_transactions > 0, `Acme knows the customer (${inAcme.entity_history[customer].prior_transactions} prior)`);
        t.equal(inAcme.entity_history[customer].is_new, false);
        const evidence = inAcme.graph_evidence[customer] as { transaction_id: string; outcome: string }[];
        t.ok(
          evidence.length > 0 && evidence.some((e) => e.transaction_id === records.transactionId(last)),
          "the evidence holds the customer's imported transactions",
        );
        const merchantEvidence = Object.values(inAcme.graph_evidence).flat() as { outcome: string }[];
        t.ok(merchantEvidence.length > 0, 'and evidence exists');
        const inOther = (await live.score(other, { ...probe, transaction_id: 'other-probe' })).json();
        t.equal(inOther.entity_history[customer].prior_transactions, 0, 'another organization has no such customer');
        t.same(Object.values(inOther.graph_evidence).flat(), [], 'nor any evidence');
        t.equal((await asKey(other, `/api/v1/transactions/${records.transactionId(0)}`)).statusCode, 404, 'nor the imported rows');

        const liveOrg = await live.organization('Bank', undefined, 'live');
        const res = await importInto(liveOrg, liveOrg.owner, { example: true });
        refused(t, res, 403, 'forbidden', 'the example for a live organization');
        t.match(res.json().detail.message, /live organization/);
        t.same((await app.inject({ url: `/api/jobs?organization_id=${liveOrg.id}`, headers: liveOrg.owner.headers })).json().jobs, [], 'no job was queued');
      });

    await t.test('a labelled upload', async (t) => {
      const org = await live.organization('Imports');
      const member = org.owner;
      // A transaction the organization scored before the import, whose id the file has too.
      const scored = await live.score(org, { amount: 10, customer_id: 'c-scored', merchant_id: 'm-other', transaction_id: 'dup-1' });
      t.equal(scored.statusCode, 200, scored.body);
      const now = Date.now();
      const at = (ms: number) => new Date(now - ms).toISOString();
      const rows: [string, string, number, string, string, string, string, string][] = [
        ['old-fraud', at(30 * DAY), 900, 'c-a', 'm-imp', 'Lisbon', 'card', '1'],
        ['old-legit', at(25 * DAY), 20, 'c-b', 'm-imp', 'Lisbon', 'card', '0'],
        ['dup-1', at(20 * DAY), 99, 'c-x', 'm-x', 'Porto', 'card', '0'],
        ['unlabelled', at(15 * DAY), 35, 'c-c', 'm-imp', 'Porto', 'wallet', ''],
        ['recent-fraud', at(1 * DAY), 700, 'c-d', 'm-imp', 'Lisbon', 'card', '1'],
        ['twice', at(2 * DAY), 5, 'c-e', 'm-y', 'Faro', 'card', '0'],
        ['twice', at(2 * DAY - 1000), 6, 'c-e', 'm-y', 'Faro', 'card', '0'],
      ];
      const csv = `transaction_id,timestamp,amount,customer_id,merchant_id,location,payment_type,label\n${rows.map((r) => r.join(',')).join('\n')}\n`;
      const up = await upload(member, csv, org.id);
      t.equal(up.statusCode, 201, up.body);
      const datasetId = up.json().id as string;

      const queued = await importInto(org, member, { dataset_id: datasetId });
      t.equal(queued.statusCode, 202, queued.body);
      t.match(queued.json(), { kind: 'history_import', source: 'dataset', dataset_id: datasetId, mode: null });
      const { job: done } = await finish(queued.json().id, member);
      t.equal(done.status, 'succeeded', done.error ?? '');
      const expected = {
        imported: 5,
        skipped_existing: 2,
        labelled: 4,
        fraud: 2,
        first_time: new Date(Date.parse(at(30 * DAY))).toISOString(),
        last_time: new Date(Date.parse(at(1 * DAY))).toISOString(),
        featured: 5,
      };
      t.same(done.summary, expected, 'dup-1 (scored before) and the second "twice" were skipped');

      const oldFraud = (await asKey(org, '/api/v1/transactions/old-fraud')).json();
      t.equal(oldFraud.source, 'import');
      t.same(
        oldFraud.outcome,
        { outcome: 'fraud', source: 'import', reported_at: new Date(Date.parse(at(30 * DAY)) + labelDelay).toISOString(), reported_by: `import:${done.id}` },
        'label known at time + label delay, from the import',
      );
      t.equal((await asKey(org, '/api/v1/transactions/unlabelled')).json().outcome, null, 'an empty label cell: no outcome');
      const dup = (await asKey(org, '/api/v1/transactions/dup-1')).json();
      t.match(dup, { source: 'scored', amount: 10, customer_id: 'c-scored' }, 'the scored transaction with that id is untouched');
      t.equal((await asKey(org, '/api/v1/transactions/twice')).json().amount, 5, 'of an id repeated in the file, the first row is kept');

      // A new payment at the merchant: the old fraud is known by now, the recent one not yet.
      const res = (
        await live.score(org, { amount: 50, customer_id: 'c-new', merchant_id: 'm-imp', location: 'Lisbon', payment_type: 'card', transaction_id: 'after' })
      ).json();
      const atMerchant = new Map((res.graph_evidence['m-imp'] as { transaction_id: string; outcome: string }[]).map((e) => [e.transaction_id, e.outcome]));
      t.equal(atMerchant.get('old-fraud'), 'fraud', 'an imported fraud older than the label delay is fraud in the evidence');
      t.equal(atMerchant.get('old-legit'), 'legit');
      t.equal(atMerchant.get('recent-fraud'), 'unknown', 'one younger than the label delay is not known yet');
      t.equal(res.entity_history['m-imp'].prior_transactions, 4, 'the merchant has its four imported payments behind it');

      const listing = async () =>
        (await app.inject({ url: `/api/organizations/${org.id}/transactions?limit=100`, headers: member.headers })).json().data as {
          transaction_id: string;
          source: string;
        }[];
      const before = await listing();

      // The job claimed again (its server "crashed" after storing): nothing is stored twice, and the
      // summary is the same.
      await service.db.query(
        `UPDATE jobs SET status = 'queued', stage = 'queued again after its server stopped', progress = 0, claimed_by = NULL, result = NULL, finished_at = NULL WHERE id = $1`,
        [done.id],
      );
      void service.jobs!.poll();
      const again = await finish(done.id, member);
      t.equal(again.job.status, 'succeeded', again.job.error ?? '');
      t.same(again.job.summary, expected, 'the same summary after running again');
      t.same(await listing(), before, 'no row duplicated');

      // The same upload imported by a second job: everything is already there.
      const second = await finish((await importInto(org, member, { dataset_id: datasetId })).json().id, member);
      t.same(
        second.job.summary,
        { imported: 0, skipped_existing: 7, labelled: 0, fraud: 0, first_time: null, last_time: null, featured: 0 },
        'a second import of the same file skips every row',
      );
      t.same(await listing(), before);

      // A file without transaction ids: each row gets one from the job and its row number.
      const noIds = await upload(member, `timestamp,amount,customer_id,merchant_id,label\n${at(3 * DAY)},12,c-n,m-n,0\n${at(2 * DAY)},13,c-n,m-n,1\n`, org.id);
      t.equal(noIds.statusCode, 201, noIds.body);
      const generated = await finish((await importInto(org, member, { dataset_id: noIds.json().id })).json().id, member);
      t.equal(generated.job.summary?.imported, 2);
      const second2 = (await asKey(org, `/api/v1/transactions/imp_${generated.job.id}_2`)).json();
      t.match(
        second2,
        { source: 'import', amount: 13, customer_id: 'c-n', location: 'unknown', payment_type: 'unknown', outcome: { outcome: 'fraud' } },
        'row 2 is imp_<job id>_2',
      );

      const jobs = (await app.inject({ url: `/api/jobs?organization_id=${org.id}`, headers: member.headers })).json().jobs as JobView[];
      t.equal(jobs.filter((j) => j.kind === 'history_import').length, 3, "imports are listed with the organization's jobs");

      // Amounts keep six decimal places, as in a score request: a vanishingly small one is stored as
      // 0 (its square would underflow the running totals and fail the whole import).
      const tiny = `0.${'0'.repeat(248)}1`;
      const fine = await upload(
        member,
        `transaction_id,timestamp,amount,customer_id,merchant_id\ntiny,${at(3 * DAY)},${tiny},c-t,m-t\nfine,${at(2 * DAY)},12.3456789,c-t,m-t\n`,
        org.id,
      );
      t.equal(fine.statusCode, 201, fine.body);
      const kept = await finish((await importInto(org, member, { dataset_id: fine.json().id })).json().id, member);
      t.equal(kept.job.status, 'succeeded', kept.job.error ?? '');
      t.equal((await asKey(org, '/api/v1/transactions/tiny')).json().amount, 0, '1e-249 is kept as 0');
      t.equal((await asKey(org, '/api/v1/transactions/fine')).json().amount, 12.345679, 'and 12.3456789 as 12.345679');
    });

    await t.test('refused: up front, or the job fails with nothing stored', async (t) => {
      const org = await live.organization('Careful');
      const member = org.owner;
      const outsider = await live.signIn('outsider');
      const now = Date.now();
      const good = await upload(
        member,
        `transaction_id,timestamp,amount,customer_id,merchant_id,label\nok-1,${new Date(now - DAY).toISOString()},5,c,m,0\n`,
        org.id,
      );
      const goodId = good.json().id as string;

      const noTimes = await upload(member, 'transaction_id,amount,customer_id,merchant_id,label\nn-1,5,c,m,0\n', org.id);
      t.equal(noTimes.statusCode, 201, 'a file without times can be scored');
      const res = await importInto(org, member, { dataset_id: noTimes.json().id });
      refused(t, res, 422, 'validation_failed', 'a dataset without a timestamp column');
      t.match(res.json().detail.message, /no timestamp column/);
      t.match(res.json().detail.fix, /"timestamp"/);

      const failing = async (csv: string, pattern: RegExp, what: string) => {
        const d = await upload(member, csv, org.id);
        t.equal(d.statusCode, 201, `${what}: the upload validates`);
        const q = await importInto(org, member, { dataset_id: d.json().id });
        t.equal(q.statusCode, 202, `${what}: queued (only the job reads every row)`);
        const { job: j } = await finish(q.json().id, member);
        t.equal(j.status, 'failed', `${what}: the job fails`);
        t.match(j.error, pattern, `${what}: ${j.error}`);
        t.equal((await asKey(org, '/api/v1/transactions/first-ok')).statusCode, 404, `${what}: nothing was stored, not even the rows before it`);
      };
      await failing(
        `transaction_id,timestamp,amount,customer_id,merchant_id,label\nfirst-ok,${new Date(now - DAY).toISOString()},5,c,m,0\nlater,${new Date(now + DAY).toISOString()},5,c,m,1\n`,
        /row 2 \(transaction later\) is at .* after the import began/,
        'a row in the future',
      );
      await failing(
        `transaction_id,timestamp,amount,customer_id,merchant_id,label\nfirst-ok,${new Date(now - DAY).toISOString()},5,c,m,0\nno-time,,5,c,m,1\n`,
        /row 2 \(transaction no-time\) has no timestamp/,
        'a row without a time',
      );

      refused(t, await importInto(org, outsider, { dataset_id: goodId }), 404, 'not_found', 'a non-member');
      refused(t, await importInto(org, { headers: {} }, { dataset_id: goodId }), 401, 'not_signed_in', 'a guest');
      refused(
        t,
        await importInto(org, { headers: { cookie: member.headers.cookie! } }, { dataset_id: goodId }),
        403,
        'csrf_failed',
        'a session without its CSRF token',
      );
      refused(t, await importInto(org, member, { dataset_id: goodId, example: true }), 422, 'validation_failed', 'both sources');
      refused(t, await importInto(org, member, {}), 422, 'validation_failed', 'neither source');
      refused(t, await importInto(org, member, { example: false }), 422, 'validation_failed', 'example false');
      refused(t, await importInto(org, member, { dataset_id: goodId, mode: 'balanced' }), 422, 'validation_failed', 'an unknown field');
      refused(t, await importInto(org, member, { dataset_id: 'ds_nope' }), 404, 'not_found', 'an unknown dataset');

      // The member's other organization's upload, and the member's own (allowed).
      const sister = await live.organization('Sister', member);
      const theirs = await upload(member, `timestamp,amount,customer_id,merchant_id\n${new Date(now - DAY).toISOString()},5,c,m\n`, sister.id);
      refused(t, await importInto(org, member, { dataset_id: theirs.json().id }), 403, 'forbidden', "another organization's dataset");
      const own = await upload(member, `transaction_id,timestamp,amount,customer_id,merchant_id\nmine-1,${new Date(now - DAY).toISOString()},5,c,m\n`);
      const ownJob = await finish((await importInto(org, member, { dataset_id: own.json().id })).json().id, member);
      t.equal(ownJob.job.summary?.imported, 1, "the member's own upload (no organization) can be imported; without labels, rows have no outcome");
      t.equal((await asKey(org, '/api/v1/transactions/mine-1')).json().outcome, null);

      await service.db.query(`UPDATE datasets SET expires_at = now() - interval '1 second' WHERE id = $1`, [goodId]);
      refused(t, await importInto(org, member, { dataset_id: goodId }), 410, 'upload_expired', 'an expired dataset');
    });

    await t.test("imports count against the organization's daily job quota", async (t) => {
      const org = await live.organization('Busy');
      const d = await upload(org.owner, `timestamp,amount,customer_id,merchant_id\n${new Date(Date.now() - DAY).toISOString()},5,c,m\n`, org.id);
      const ids: string[] = [];
      for (let i = 0; i < QUOTA; i++) {
        const q = await importInto(org, org.owner, { dataset_id: d.json().id });
        t.equal(q.statusCode, 202);
        ids.push(q.json().id);
      }
      const over = await importInto(org, org.owner, { example: true });
      refused(t, over, 429, 'job_quota_exceeded', `import ${QUOTA + 1} of the day`);
      for (const id of ids) await finish(id, org.owner, 20);
    });
  });
}
