// The embedded database's disk fills up under a running server: scores are answered 503
// `database_unavailable` with Retry-After (never a 500, never a 200 for what was not stored), the
// process keeps running, nothing stored before is lost, and scoring resumes by itself once space
// returns. DATA_DIR is a small tmpfs of the test's own, filled with a file and emptied again.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs } from '../support/components.ts';
import { SignIn, spawnServer, type ServerProcess } from '../support/processes.ts';

t.test('a full disk under the embedded database', { skip: needs('tmpfs') }, async (t) => {
  const disk = mkdtempSync(join(tmpdir(), 'full-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', disk]);
  const signIn = await SignIn.start();
  let server: ServerProcess | undefined;
  t.teardown(async () => {
    await server?.stop('SIGKILL');
    await signIn.close();
    execFileSync('umount', ['-l', disk]);
    rmSync(disk, { recursive: true, force: true });
  });
  server = await spawnServer({ ...signIn.env, DATA_DIR: join(disk, 'data') });
  const org = await signIn.organization(server.base, 'disk');
  const score = async (id: string) => {
    const res = await fetch(`${server!.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.secret}` },
      body: JSON.stringify({ transaction_id: id, amount: 25, customer_id: 'c-1', merchant_id: 'm-1' }),
      signal: AbortSignal.timeout(15_000),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      replayed: res.headers.get('idempotent-replayed') === 'true',
      body: await res.json(),
    };
  };
  const first: string[] = [];
  for (let i = 0; i < 5; i++) {
    const answer = await score(`before-${i}`);
    t.equal(answer.status, 200, `before-${i} is recorded`);
    first.push(JSON.stringify(answer.body));
  }

  // Fill the disk but for a little: then a score's commit has no room.
  const filler = join(disk, 'filler');
  let size = 0;
  try {
    for (;;) {
      writeFileSync(filler, Buffer.alloc(size + 1024 * 1024));
      size += 1024 * 1024;
    }
  } catch {
    // The disk is full.
  }
  const refused: { status: number; reason: string; retryAfter: string | null }[] = [];
  for (let i = 0; i < 30 && refused.length < 3; i++) {
    const answer = await score(`full-${i}`);
    if (answer.status !== 200) refused.push({ status: answer.status, reason: answer.body?.detail?.reason, retryAfter: answer.retryAfter });
  }
  t.ok(refused.length > 0, `scores were refused while the disk was full (${refused.length})`);
  t.same(
    refused.filter((r) => r.status !== 503 || r.reason !== 'database_unavailable' || !(Number(r.retryAfter) > 0)),
    [],
    'each as 503 database_unavailable with Retry-After',
  );
  t.equal(server.child.exitCode, null, 'the process kept running');

  rmSync(filler);
  const after = await score('after-space');
  t.equal(after.status, 200, `scoring resumed once space returned (${JSON.stringify(after.body).slice(0, 200)})`);
  for (let i = 0; i < 5; i++) {
    const again = await score(`before-${i}`);
    t.ok(again.status === 200 && again.replayed && JSON.stringify(again.body) === first[i], `before-${i} is still stored: a retry answers its stored decision`);
  }
});
