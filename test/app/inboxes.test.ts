// Inboxes as a fraud lead manages them, over HTTP on each storage back end: an owner changes an
// inbox (members, SLA, escalation inbox, round-robin assignment with a cap, its place in routing
// order) and the next decisions are routed and assigned with the new settings; an analyst may not
// (403); a member escalates a case to the escalation inbox (moved, unassigned, due after its SLA,
// told on the timeline), and escalating where there is none is 422 `no_escalation_inbox`; an
// inbox with open cases, or escalated to, is not deleted (409); its figures match a count by hand;
// a file attached to a case comes back byte for byte as a download that is never rendered, with
// its name, size and SHA-256 on the timeline; a file over 5 MB, a name like a path, a closed case
// are refused with their reasons; another organization reaches none of it.

import t from 'tap';
import { createHash } from 'node:crypto';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

/** A multipart form with one file field, as a browser sends it. */
function form(filename: string, content: Buffer): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----test-boundary-7d1f';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    'utf8',
  );
  return {
    payload: Buffer.concat([head, content, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

for (const backend of backends()) {
  t.test(`inboxes managed, on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');
    type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
    const as = (org: Organization, method: Method, path: string, payload?: unknown, headers = org.owner.headers) =>
      app.inject({ method, url: `/api/organizations/${org.id}${path}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    const analysts = [await live.signIn('ana'), await live.signIn('bo')];
    for (const a of analysts)
      await live.s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [shop.id, a.userId]);
    const [ana, bo] = analysts as [(typeof analysts)[0], (typeof analysts)[0]];
    t.equal(
      (await as(shop, 'POST', '/rules', { name: 'review', expression: 'customer_id.startsWith("r-")', action: 'review', status: 'active' })).statusCode,
      201,
    );

    const senior = (await as(shop, 'POST', '/inboxes', { name: 'Senior', sla_hours: 2, members: [shop.owner.userId] })).json();
    const first = (await as(shop, 'POST', '/inboxes', { name: 'First line', sla_hours: 24 })).json();
    t.match(first, { escalation_inbox_id: null, auto_assign: null });
    let n = 0;
    const pay = async (customer: string) => {
      const res = await live.score(shop, { transaction_id: `p${++n}`, amount: 50, customer_id: customer, merchant_id: 'm-1' });
      if (res.statusCode !== 200) throw new Error(res.body);
      t.equal(res.json().decision, 'review');
    };
    const caseOf = async (customer: string) =>
      (await as(shop, 'GET', '/cases')).json().data.find((c: { entity: { id: string }; status: string }) => c.entity.id === customer && c.status !== 'closed');

    await t.test('owners change inboxes; analysts may not', async (t) => {
      const change = { members: [ana.userId, bo.userId], auto_assign: { cap: 1 }, escalation_inbox_id: senior.id, position: 0 };
      const refused = await as(shop, 'PATCH', `/inboxes/${first.id}`, change, ana.headers);
      t.equal(refused.statusCode, 403, 'an analyst: forbidden');
      t.equal(refused.json().detail.reason, 'forbidden');
      t.equal((await as(shop, 'DELETE', `/inboxes/${first.id}`, undefined, ana.headers)).statusCode, 403);
      const res = await as(shop, 'PATCH', `/inboxes/${first.id}`, change);
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      t.match(res.json(), { members: [ana.userId, bo.userId], auto_assign: { cap: 1 }, escalation_inbox_id: senior.id, position: 0, sla_hours: 24 });
      t.same(
        (await as(shop, 'GET', '/inboxes')).json().data.map((i: { name: string }) => i.name),
        ['First line', 'Senior'],
        'moved first in routing order',
      );
      for (const [body, reason] of [
        [{ escalation_inbox_id: first.id }, 'validation_failed'],
        [{ members: ['stranger'] }, 'not_a_member'],
        [{ route: 'amount >' }, 'invalid_rule'],
        [{ name: 'Senior' }, 'conflict'],
        [{ group_by: 'merchant' }, 'validation_failed'],
      ] as const) {
        const r = await as(shop, 'PATCH', `/inboxes/${first.id}`, body);
        t.equal(r.json().detail?.reason, reason, `${JSON.stringify(body)}: ${reason}`);
      }
      t.equal((await as(shop, 'PATCH', '/inboxes/inbox_nope', { sla_hours: 1 })).statusCode, 404);
      t.match((await as(shop, 'PATCH', `/inboxes/${first.id}`, {})).json(), { auto_assign: { cap: 1 } }, 'an empty change changes nothing');
      const audit = await as(shop, 'GET', `/inboxes/${first.id}/audit`, undefined, ana.headers);
      t.equal(audit.statusCode, 200, 'members read an inbox’s record');
      t.match(audit.json().data, [
        { action: 'created', by: shop.owner.userId, detail: { name: 'First line', sla_hours: 24, members: [] } },
        { action: 'changed', by: shop.owner.userId, detail: { members: [ana.userId, bo.userId], auto_assign_cap: 1, escalation_id: senior.id, position: 0 } },
      ]);
      t.equal(audit.json().data.length, 2, 'refused and empty changes are not recorded');
      t.equal((await as(shop, 'GET', '/inboxes/inbox_nope/audit')).statusCode, 404);
      t.equal((await as(other, 'GET', `/inboxes/${first.id}/audit`)).statusCode, 404, "another organization does not read this one's inbox record");
    });

    await t.test('new cases go round the members, none above the cap', async (t) => {
      await pay('r-1');
      await pay('r-2');
      await pay('r-3');
      await pay('r-1');
      t.same(
        [(await caseOf('r-1')).assignee, (await caseOf('r-2')).assignee, (await caseOf('r-3')).assignee],
        [ana.userId, bo.userId, null],
        'each analyst one case; the third waits',
      );
      t.equal((await caseOf('r-1')).inbox_id, first.id, 'routed by the default inbox now first');
    });

    await t.test('escalation', async (t) => {
      const c = await caseOf('r-1');
      const res = await as(shop, 'POST', `/cases/${c.id}/escalate`, { reason: 'Card testing pattern, needs a senior' }, ana.headers);
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      const moved = res.json();
      t.match(moved, { id: c.id, inbox_id: senior.id, assignee: null, status: 'open' });
      t.ok(Math.abs(Date.parse(moved.due_at) - Date.now() - 2 * 3_600_000) < 60_000, "due after the senior inbox's two hours");
      t.match(moved.timeline.at(-1), {
        kind: 'escalated',
        actor: ana.userId,
        detail: { from_inbox: first.id, to_inbox: senior.id, reason: 'Card testing pattern, needs a senior', from_assignee: ana.userId },
      });
      t.same(moved.chain, { intact: true, broken_at: null });
      const nowhere = await as(shop, 'POST', `/cases/${c.id}/escalate`, { reason: 'again' });
      t.equal(nowhere.statusCode, 422);
      t.equal(nowhere.json().detail.reason, 'no_escalation_inbox');
      t.equal((await as(other, 'POST', `/cases/${c.id}/escalate`, { reason: 'x' })).statusCode, 404, 'another organization: not found');
    });

    await t.test('deleting an inbox in use is refused', async (t) => {
      const busy = await as(shop, 'DELETE', `/inboxes/${first.id}`);
      t.equal(busy.statusCode, 409);
      t.match(busy.json().detail, { reason: 'conflict', open_cases: 2 });
      t.match(busy.json().detail.fix, /Close or escalate/);
      const escalated = await as(shop, 'DELETE', `/inboxes/${senior.id}`);
      t.equal(escalated.statusCode, 409, 'the senior inbox has a case and is escalated to');
      const spare = (await as(shop, 'POST', '/inboxes', { name: 'Spare', route: 'amount > 1000000.0' })).json();
      t.equal((await as(shop, 'DELETE', `/inboxes/${spare.id}`)).statusCode, 204);
      t.same(
        (await as(shop, 'GET', '/inboxes')).json().data.map((i: { name: string }) => i.name),
        ['First line', 'Senior'],
      );
      t.equal((await as(other, 'DELETE', `/inboxes/${first.id}`)).statusCode, 404, 'another organization: not found');
    });

    await t.test("an inbox's figures", async (t) => {
      const c3 = await caseOf('r-3');
      await as(shop, 'POST', `/cases/${c3.id}/status`, { status: 'closed', resolution: 'inconclusive' });
      const res = await as(shop, 'GET', `/inboxes/${first.id}/stats`, undefined, ana.headers);
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      // First line now: r-2 open (bo), r-3 closed (bo's? no: it was unassigned), r-1 escalated away.
      t.match(res.json(), {
        inbox_id: first.id,
        open: 1,
        in_progress: 0,
        snoozed: 0,
        overdue: 0,
        closed_7d: 1,
        closed_30d: 1,
        analysts: [{ user_id: bo.userId, open: 1, snoozed: 0, closed_30d: 0 }],
      });
      t.ok(res.json().median_time_to_close_hours >= 0);
      t.equal((await as(other, 'GET', `/inboxes/${first.id}/stats`)).statusCode, 404, 'another organization: not found');
    });

    await t.test('attachments', async (t) => {
      const c = await caseOf('r-2');
      const content = Buffer.from('<script>alert(1)</script>\x00\xff binary', 'latin1');
      const sent = form('statement <1>.html', content);
      const res = await as(shop, 'POST', `/cases/${c.id}/attachments`, sent.payload, { ...bo.headers, ...sent.headers });
      t.equal(res.statusCode, 201, res.body.slice(0, 300));
      const sha256 = createHash('sha256').update(content).digest('hex');
      const a = res.json();
      t.match(a, { case_id: c.id, name: 'statement <1>.html', size: content.length, sha256, created_by: bo.userId });
      t.notMatch(a.id, /statement/, 'stored under a random id, not its name');
      const detail = (await as(shop, 'GET', `/cases/${c.id}`)).json();
      t.match(detail.timeline.at(-1), {
        kind: 'attachment',
        actor: bo.userId,
        detail: { attachment_id: a.id, name: 'statement <1>.html', size: content.length, sha256 },
      });

      const down = await as(shop, 'GET', `/cases/${c.id}/attachments/${a.id}`, undefined, ana.headers);
      t.equal(down.statusCode, 200);
      t.same([...down.rawPayload], [...content], 'the same bytes');
      t.equal(down.headers['content-type'], 'application/octet-stream');
      t.equal(down.headers['x-content-type-options'], 'nosniff');
      t.equal(down.headers['content-disposition'], 'attachment; filename="statement <1>.html"');

      for (const name of ['../../etc/passwd', 'dir/file.txt', 'C:\\boot.ini', 'a\u0001b.txt', '..']) {
        const bad = form(name, Buffer.from('x'));
        const r = await as(shop, 'POST', `/cases/${c.id}/attachments`, bad.payload, { ...shop.owner.headers, ...bad.headers });
        t.equal(r.statusCode, 422, `${JSON.stringify(name)} refused`);
        t.equal(r.json().detail.reason, 'validation_failed');
        t.ok(r.json().detail.fix.length > 0, 'with a fix');
      }
      const big = form('big.bin', Buffer.alloc(5 * 1024 * 1024 + 1, 7));
      const tooBig = await as(shop, 'POST', `/cases/${c.id}/attachments`, big.payload, { ...shop.owner.headers, ...big.headers });
      t.equal(tooBig.statusCode, 413, tooBig.body.slice(0, 200));
      t.equal(tooBig.json().detail.reason, 'payload_too_large');
      const exact = form('exact.bin', Buffer.alloc(5 * 1024 * 1024, 7));
      t.equal(
        (await as(shop, 'POST', `/cases/${c.id}/attachments`, exact.payload, { ...shop.owner.headers, ...exact.headers })).statusCode,
        201,
        '5 MB exactly',
      );
      t.equal((await as(shop, 'POST', `/cases/${c.id}/attachments`, { file: 'x' })).statusCode, 415, 'JSON is not an upload');

      // Another organization: neither the case nor the file.
      t.equal((await as(shop, 'GET', `/cases/${c.id}/attachments/${a.id}`, undefined, other.owner.headers)).statusCode, 404, 'not a member: 404');
      t.equal((await as(other, 'GET', `/cases/${c.id}/attachments/${a.id}`)).statusCode, 404, 'through its own organization: 404');
      t.equal((await as(other, 'GET', `/cases/${c.id}`)).statusCode, 404);
      const theirs = form('x.txt', Buffer.from('x'));
      t.equal((await as(other, 'POST', `/cases/${c.id}/attachments`, theirs.payload, { ...other.owner.headers, ...theirs.headers })).statusCode, 404);
      t.equal((await app.inject({ url: `/api/organizations/${shop.id}/cases/${c.id}/attachments/${a.id}` })).statusCode, 401, 'a guest: 401');

      await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'closed', resolution: 'legitimate' });
      const late = form('late.txt', Buffer.from('x'));
      const closed = await as(shop, 'POST', `/cases/${c.id}/attachments`, late.payload, { ...shop.owner.headers, ...late.headers });
      t.equal(closed.statusCode, 409);
      t.equal(closed.json().detail.reason, 'case_closed');
      t.equal((await as(shop, 'GET', `/cases/${c.id}/attachments/${a.id}`)).statusCode, 200, 'still downloaded once closed');
    });
  });
}
