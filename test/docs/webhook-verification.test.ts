// The signature checks docs/integrating.md shows (Node, with the `standardwebhooks` package; Python,
// with its standard library) run as written against deliveries signed the way the service signs
// them: they accept a genuine one (also when it carries two signatures during a rotation, whichever
// secret the receiver holds) and refuse a changed body, another secret and an old timestamp.

import t from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { signatureHeader } from '../../src/jobs/webhook-send.ts';
import { tempDir } from '../support/temp.ts';

const run = promisify(execFile);
const doc = readFileSync(new URL('../../docs/integrating.md', import.meta.url), 'utf8');
const block = (lang: string) => {
  const m = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(doc.slice(doc.indexOf('\n## Webhooks\n')));
  if (!m) throw new Error(`no ${lang} block in the Webhooks section`);
  return m[1]!;
};

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const current = secret();
const previous = secret();
function delivery(o: { secrets?: string[]; at?: Date; body?: string } = {}) {
  const body =
    o.body ??
    JSON.stringify({
      id: 'evt_1',
      type: 'decision.block',
      created_at: new Date().toISOString(),
      organization_id: 'org_1',
      data: { decision: 'block', risk_score: 0.93 },
    });
  const at = new Date(Math.floor((o.at ?? new Date()).getTime() / 1000) * 1000);
  return {
    body,
    headers: {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(at.getTime() / 1000),
      'webhook-signature': signatureHeader(o.secrets ?? [current], 'evt_1', at, body),
    },
  };
}
const cases = [
  { name: 'a genuine delivery', d: delivery(), secret: current, ok: true },
  { name: 'two signatures after a rotation, with the new secret', d: delivery({ secrets: [current, previous] }), secret: current, ok: true },
  { name: 'two signatures after a rotation, with the old secret', d: delivery({ secrets: [current, previous] }), secret: previous, ok: true },
  { name: 'a changed body', d: { ...delivery(), body: delivery().body.replace('0.93', '0.01') }, secret: current, ok: false },
  { name: 'another secret', d: delivery({ secrets: [previous] }), secret: current, ok: false },
  { name: 'a timestamp ten minutes old', d: delivery({ at: new Date(Date.now() - 600_000) }), secret: current, ok: false },
];

t.test('the Node example', async (t) => {
  const dir = tempDir('verify-js-');
  const file = join(dir, 'verify.mjs');
  // Written beside the project's node_modules is not needed: import the package by its path.
  writeFileSync(
    file,
    block('js').replace(
      "from 'standardwebhooks'",
      `from ${JSON.stringify(pathToFileURL(join(process.cwd(), 'node_modules/standardwebhooks/dist/index.js')).href)}`,
    ),
  );
  const { verifiedEvent } = (await import(pathToFileURL(file).href)) as { verifiedEvent: (s: string, b: string, h: Record<string, string>) => { id: string } };
  for (const c of cases) {
    if (c.ok) t.equal(verifiedEvent(c.secret, c.d.body, c.d.headers).id, 'evt_1', c.name);
    else t.throws(() => verifiedEvent(c.secret, c.d.body, c.d.headers), c.name);
  }
});

t.test('the Python example', async (t) => {
  const dir = tempDir('verify-py-');
  const file = join(dir, 'verify.py');
  writeFileSync(
    file,
    `${block('python')}\nimport sys\nfor case in json.load(sys.stdin):\n    try:\n        print(verified_event(case["secret"], case["body"].encode(), case["headers"])["id"])\n    except ValueError as e:\n        print("refused:", e)\n`,
  );
  const child = run('python3', [file], { timeout: 30_000 });
  child.child.stdin!.end(JSON.stringify(cases.map((c) => ({ secret: c.secret, body: c.d.body, headers: c.d.headers }))));
  const lines = (await child).stdout.trim().split('\n');
  cases.forEach((c, i) => {
    if (c.ok) t.equal(lines[i], 'evt_1', c.name);
    else t.match(lines[i], /^refused: /, c.name);
  });
});
