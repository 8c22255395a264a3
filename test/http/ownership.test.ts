// Ownership of datasets and jobs through the real app, on both storage back ends: uploads and jobs
// of a signed-in user are theirs; with `organization_id` they belong to the organization and its
// members; everyone else (another user, a guest) gets 404 for the dataset, its preview, its jobs,
// their results and downloads, and the organization's listings. A guest's upload stays reachable
// by its id. An organization's jobs per UTC day stop at MAX_JOBS_PER_ORG_PER_DAY with 429
// `job_quota_exceeded` and Retry-After, and nothing is queued past it.

import t from 'tap';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { backends, start } from '../support/server.ts';
import { IdentityProvider, makeKey, signWith } from '../support/idp.ts';

const csv = toCsv(simulate({ seed: 5, customers: 60, merchants: 12, days: 3, rings: 0 }));

for (const backend of backends()) {
  t.test(`ownership and quota on ${backend.name}`, async (t) => {
    const idp = await new IdentityProvider().start();
    t.teardown(() => idp.close());
    const key = await makeKey('ES256', 'k1');
    idp.published = [key];
    const s = await start({
      backend,
      overrides: { AUTHPROVIDER_URL: idp.url, SESSION_SECRET: 'x'.repeat(48), authConfigured: true, MAX_JOBS_PER_ORG_PER_DAY: 2, MAX_TRAINING_ROWS: 100 },
    });
    t.teardown(() => s.close());
    const app = s.app;

    const signIn = async (sub: string) => {
      const res = await app.inject({ method: 'POST', url: '/api/auth/session', payload: { access_token: await signWith(key, idp.issuer, { sub }) } });
      const c = Object.fromEntries(res.cookies.map((x) => [x.name, x.value]));
      return { cookie: `service_session=${c.service_session}; service_csrf=${c.service_csrf}`, 'x-csrf-token': c.service_csrf! };
    };
    const ana = await signIn('user-ana');
    const bo = await signIn('user-bo');
    const upload = (headers: Record<string, string>, query = '') =>
      app.inject({ method: 'POST', url: `/api/datasets/upload${query}`, headers: { ...headers, 'content-type': 'text/csv' }, payload: csv });
    const queue = (headers: Record<string, string>, body: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/api/datasets/score', headers, payload: body });

    const acme = (await app.inject({ method: 'POST', url: '/api/organizations', headers: ana, payload: { name: 'Acme' } })).json();
    const boOrg = (await app.inject({ method: 'POST', url: '/api/organizations', headers: bo, payload: { name: 'Bo Ltd' } })).json();

    // Uploads: personal, for an organization, a guest's.
    const personal = (await upload(ana)).json();
    t.equal(personal.organization_id, null);
    const orgUpload = await upload(ana, `?organization_id=${acme.id}`);
    t.equal(orgUpload.statusCode, 201, 'upload for my organization');
    const orgData = orgUpload.json();
    t.equal(orgData.organization_id, acme.id);
    t.equal((await upload(ana, `?organization_id=${boOrg.id}`)).statusCode, 404, 'uploading for another organization is 404');
    t.equal((await upload({}, `?organization_id=${acme.id}`)).json().detail.reason, 'not_signed_in', 'a guest cannot name an organization');
    const guestData = (await upload({})).json();

    for (const [who, headers, id, expected] of [
      ['the owner', ana, personal.id, 200],
      ['another user', bo, personal.id, 404],
      ['a guest', {}, personal.id, 404],
      ['a member', ana, orgData.id, 200],
      ['a non-member', bo, orgData.id, 404],
      ['a guest', {}, orgData.id, 404],
      ['anyone with the id', bo, guestData.id, 200],
    ] as const) {
      t.equal((await app.inject({ url: `/api/datasets/${id}`, headers })).statusCode, expected, `dataset seen by ${who}: ${expected}`);
      t.equal((await app.inject({ url: `/api/datasets/${id}/preview`, headers })).statusCode, expected, `preview seen by ${who}: ${expected}`);
    }
    t.equal((await app.inject({ method: 'DELETE', url: `/api/datasets/${personal.id}`, headers: bo })).statusCode, 404, 'another user cannot delete it');

    const listed = (await app.inject({ url: `/api/organizations/${acme.id}/datasets`, headers: ana })).json();
    t.same(
      listed.datasets.map((d: { id: string }) => d.id),
      [orgData.id],
      "the organization's datasets",
    );
    t.equal((await app.inject({ url: `/api/organizations/${acme.id}/datasets`, headers: bo })).statusCode, 404, "another organization's datasets are 404");

    // Jobs: an organization dataset's job is the organization's and counts against its quota.
    const j1 = await queue(ana, { dataset_id: orgData.id });
    t.equal(j1.statusCode, 202);
    t.equal(j1.json().organization_id, acme.id, "a job of the organization's dataset is the organization's");
    t.equal((await queue(bo, { dataset_id: orgData.id })).statusCode, 404, 'a non-member cannot queue it');
    t.equal((await queue(ana, { dataset_id: personal.id, organization_id: boOrg.id })).statusCode, 404, 'nor name an organization they are not in');
    const j2 = await queue(ana, { dataset_id: personal.id, organization_id: acme.id });
    t.equal(j2.statusCode, 202, 'second job of the day');
    const over = await queue(ana, { dataset_id: orgData.id });
    t.equal(over.statusCode, 429, 'the third job of the day is over the quota');
    t.equal(over.json().detail.reason, 'job_quota_exceeded');
    const retry = Number(over.headers['retry-after']);
    t.ok(retry > 0 && retry <= 86_400, `Retry-After until midnight UTC (${retry} s)`);
    t.equal(over.json().detail.retry_after_seconds, retry);
    const personalJob = await queue(ana, { dataset_id: personal.id });
    t.equal(personalJob.statusCode, 202, 'personal jobs are not counted against the organization');

    const orgJobs = (await app.inject({ url: `/api/jobs?organization_id=${acme.id}`, headers: ana })).json();
    t.same(orgJobs.jobs.map((j: { id: string }) => j.id).sort(), [j1.json().id, j2.json().id].sort(), "the organization's jobs, none past the quota");
    t.equal((await app.inject({ url: `/api/jobs?organization_id=${acme.id}`, headers: bo })).statusCode, 404, "another organization's jobs are 404");
    t.same(
      (await app.inject({ url: '/api/jobs', headers: ana })).json().jobs.map((j: { id: string }) => j.id),
      [personalJob.json().id],
      'my own jobs',
    );
    t.equal((await app.inject({ url: '/api/jobs' })).json().detail.reason, 'not_signed_in');

    for (const path of ['', '/result', '/download']) {
      t.equal((await app.inject({ url: `/api/jobs/${j1.json().id}${path}`, headers: bo })).statusCode, 404, `another user: job${path} is 404`);
      t.equal((await app.inject({ url: `/api/jobs/${j1.json().id}${path}` })).statusCode, 404, `a guest: job${path} is 404`);
    }
    t.equal((await app.inject({ url: `/api/jobs/${j1.json().id}`, headers: ana })).statusCode, 200, 'a member reads it');
    const guestJob = await queue({}, { dataset_id: guestData.id });
    t.equal(guestJob.statusCode, 202, 'a guest queues their own upload');
    t.equal((await app.inject({ url: `/api/jobs/${guestJob.json().id}` })).statusCode, 200, "a guest's job is reachable by its id");

    // Training requests: every check for real, then 501.
    const lines = csv.trim().split('\n');
    const header = lines[0]!;
    const labelled = lines
      .slice(1)
      .filter((l) => l.split(',')[7] === '1')
      .slice(0, 5)
      .concat(
        lines
          .slice(1)
          .filter((l) => l.split(',')[7] === '0')
          .slice(0, 30),
      );
    labelled.sort((a, b) => (a.split(',')[1]! < b.split(',')[1]! ? -1 : 1));
    const small = `${[header, ...labelled].join('\n')}\n`;
    const oneClass = `${[
      header,
      ...lines
        .slice(1)
        .filter((l) => l.split(',')[7] === '0')
        .slice(0, 30),
    ].join('\n')}\n`;
    const noLabel = `${lines
      .map((l) =>
        l
          .split(',')
          .filter((_, i) => i !== 7)
          .join(','),
      )
      .slice(0, 31)
      .join('\n')}\n`;
    const up = async (body: string, query = '') =>
      (await app.inject({ method: 'POST', url: `/api/datasets/upload${query}`, headers: { ...ana, 'content-type': 'text/csv' }, payload: body })).json()
        .id as string;
    const smallId = await up(small);
    const train = (headers: Record<string, string>, body: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/api/training/jobs', headers, payload: body });
    const expectReason = async (what: string, res: Awaited<ReturnType<typeof train>>, status: number, reason: string) => {
      t.equal(res.statusCode, status, `training: ${what} → ${status}`);
      t.equal(res.json().detail.reason, reason, `training: ${what} → ${reason}`);
    };
    await expectReason('a guest', await train({}, { dataset_id: smallId }), 401, 'not_signed_in');
    await expectReason('another organization', await train(ana, { dataset_id: smallId, organization_id: boOrg.id }), 404, 'not_found');
    await expectReason("someone else's dataset", await train(bo, { dataset_id: smallId }), 404, 'not_found');
    await expectReason('too many rows', await train(ana, { dataset_id: personal.id }), 400, 'too_many_rows');
    await expectReason('no label column', await train(ana, { dataset_id: await up(noLabel) }), 422, 'validation_failed');
    await expectReason('one class only', await train(ana, { dataset_id: await up(oneClass) }), 422, 'validation_failed');
    await expectReason('over the quota', await train(ana, { dataset_id: smallId, organization_id: acme.id }), 429, 'job_quota_exceeded');
    const ok = await train(ana, { dataset_id: smallId, name: 'mine' });
    await expectReason('every check passed', ok, 501, 'not_implemented');
    t.same(
      { rows: ok.json().detail.would_run.rows, fraud: ok.json().detail.would_run.fraud_labels, legit: ok.json().detail.would_run.legitimate_labels },
      { rows: 35, fraud: 5, legit: 30 },
      'it says what would have run',
    );
  });
}
