// A history read back from a snapshot has the same hidden classes as one built by its constructors:
// the scoring code then runs on one shape of each part in a process that holds both kinds (the
// public sandbox and large organizations read back, small ones built where they are scored), instead
// of slowing down as each new shape reaches it. Checked with V8's own comparison of two objects'
// maps, in a process of its own started with the flag that allows it, on a history with key fields,
// outcomes and ids indexed.

import { spawnSync } from 'node:child_process';
import t from 'tap';

const script = `
const { History } = await import(${JSON.stringify(new URL('../../src/domain/history/history.ts', import.meta.url).href)});
const { historyBytes, historyFromBytes } = await import(${JSON.stringify(new URL('../../src/domain/history/snapshot.ts', import.meta.url).href)});
const { Rng } = await import(${JSON.stringify(new URL('../../src/domain/rng.ts', import.meta.url).href)});
const { generate } = await import(${JSON.stringify(new URL('../support/history-fixtures.ts', import.meta.url).href)});
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const built = new History().withRecords();
built.transactions.indexIds();
const rows = generate(new Rng(7), 3000);
rows.forEach((tx, i) => {
  const k = built.add({ ...tx, ...(i % 3 === 0 ? { keys: ['device=d' + (i % 50)] } : {}) });
  if (i % 10 === 0) built.setOutcome(k, i % 20 === 0 ? 1 : 0, tx.time);
});
const read = historyFromBytes(historyBytes(built).map((p) => p.slice()));
const checked = new Map();
const differ = [];
const seen = new Set();
const walk = (a, b, path) => {
  if (typeof a !== 'object' || a === null || ArrayBuffer.isView(a) || seen.has(a)) return;
  seen.add(a);
  if (Array.isArray(a)) return a.forEach((x, i) => walk(x, b[i], path + '[' + i + ']'));
  if (a instanceof Map) {
    const theirs = [...b.values()];
    return [...a.values()].forEach((x, i) => walk(x, theirs[i], path + '{' + i + '}'));
  }
  const name = Object.getPrototypeOf(a).constructor.name;
  if (name !== 'Object') {
    checked.set(name, (checked.get(name) ?? 0) + 1);
    if (!sameMap(a, b)) differ.push(path + ' (' + name + ')');
  }
  for (const k of Object.keys(a)) walk(a[k], b[k], path + '.' + k);
};
walk(built, read, 'history');
process.stdout.write(JSON.stringify({ checked: Object.fromEntries(checked), differ }));
`;

t.test("a history read back from a snapshot has its built twin's hidden class in every part", async (t) => {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
  t.equal(r.status, 0, `the check ran: ${r.stderr.slice(-2000)}`);
  const { checked, differ } = JSON.parse(r.stdout) as { checked: Record<string, number>; differ: string[] };
  t.ok(Object.keys(checked).length >= 10, `every kind of part compared: ${JSON.stringify(checked)}`);
  t.ok(checked.History === 1 && (checked.Lists ?? 0) > 1, 'the history itself and its lists among them');
  t.same(differ, [], 'no part with a hidden class of its own');
});
