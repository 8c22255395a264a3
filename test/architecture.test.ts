// The shape of src/, held by a test: every layer imports only the layers below it, no file takes
// part in an import cycle, nothing in src/ imports the command lines (tools/), the benchmarks or the
// tests, only src/addon/ loads the native addon, and src/contract/ loads nothing with I/O. The
// command lines and the benchmarks sit above src/: tools/ holds commands only (nothing imports
// them), and a benchmark imports src/ and the harness it shares with the tests, never a command. Imports
// are read with TypeScript's own
// pre-processor (static, type-only, re-exports and literal dynamic imports alike), so a comment or
// a string that looks like an import counts for nothing. docs/architecture.md draws the same order.

import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** Top to bottom. A file may import its own layer and every layer listed after it. */
export const LAYERS: readonly { layer: string; holds: (path: string) => boolean }[] = [
  // The process: the server's entry, and the option parser every command line (tools/, bench/) uses.
  { layer: 'main', holds: (p) => p === 'main.ts' || p === 'command-line.ts' },
  { layer: 'http', holds: (p) => p.startsWith('http/') },
  { layer: 'app', holds: (p) => p.startsWith('app/') },
  // Configuration is read by the process and handed down: only main, http and app see it.
  { layer: 'config', holds: (p) => p === 'config.ts' },
  { layer: 'jobs', holds: (p) => p.startsWith('jobs/') },
  { layer: 'live', holds: (p) => p.startsWith('live/') },
  { layer: 'scoring', holds: (p) => p.startsWith('scoring/') },
  { layer: 'storage', holds: (p) => p.startsWith('storage/') },
  // The training library: it learns from rows it is handed, never reading or writing storage; the
  // application's use cases and the command lines call it.
  { layer: 'training', holds: (p) => p.startsWith('training/') },
  // The API's requests and answers as zod schemas and their types: the one definition of each,
  // which http/ validates and documents, the layers below build to, and the dashboard reads.
  { layer: 'contract', holds: (p) => p.startsWith('contract/') },
  { layer: 'datasets', holds: (p) => p.startsWith('datasets/') },
  { layer: 'model', holds: (p) => p.startsWith('model/') },
  { layer: 'addon', holds: (p) => p.startsWith('addon/') },
  { layer: 'domain', holds: (p) => p.startsWith('domain/') },
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sources(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

interface Edge {
  from: string;
  to: string;
  /** As written in the importing file. */
  spec: string;
  /** `import type` / `export type`: no value crosses. */
  typeOnly: boolean;
}

/** Type-only imports of a file, by specifier. */
function typeOnlySpecs(text: string): Set<string> {
  const specs = new Set<string>();
  for (const m of text.matchAll(/^(?:import|export)\s+type\s+[^;]*?from\s+['"]([^'"]+)['"]/gms)) specs.add(m[1]!);
  return specs;
}

const files = sources(src).map((f) => relative(src, f));
const edges: Edge[] = [];
const outside: Edge[] = [];
/** Per file, the packages and Node modules it imports: all of them, and those it loads at run time. */
const packages = new Map<string, { all: string[]; loaded: string[] }>();
for (const file of files) {
  const text = readFileSync(join(src, file), 'utf8');
  const typeOnly = typeOnlySpecs(text);
  const valueSpecs = new Set(
    ts.preProcessFile(text.replace(/^(?:import|export)\s+type\s+[^;]*?from\s+['"][^'"]+['"];?/gms, ''), true, true).importedFiles.map((r) => r.fileName),
  );
  const all = ts
    .preProcessFile(text, true, true)
    .importedFiles.map((r) => r.fileName)
    .filter((spec) => !spec.startsWith('.'));
  packages.set(file, { all, loaded: all.filter((spec) => valueSpecs.has(spec)) });
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    const spec = ref.fileName;
    if (!spec.startsWith('.')) continue;
    const target = relative(src, resolve(src, dirname(file), spec));
    const edge = { from: file, to: target, spec, typeOnly: typeOnly.has(spec) && !valueSpecs.has(spec) };
    if (target.startsWith('..')) outside.push({ ...edge, to: relative(root, resolve(src, dirname(file), spec)) });
    else edges.push(edge);
  }
}

function layerOf(path: string): number {
  const k = LAYERS.findIndex((l) => l.holds(path));
  return k;
}

/** Strongly connected components of more than one file (Tarjan), each a cycle of imports. */
function cycles(): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || edges.some((e) => e.from === v && e.to === v)) found.push(component.sort());
    }
  };
  for (const f of files) if (!order.has(f)) visit(f);
  return found;
}

t.test('every file of src/ belongs to a layer', async (t) => {
  t.same(
    files.filter((f) => layerOf(f) < 0),
    [],
    'files outside every layer (add the folder to LAYERS and docs/architecture.md)',
  );
});

t.test('no import runs up a layer', async (t) => {
  const upward = edges
    .filter((e) => layerOf(e.to) < layerOf(e.from))
    .map((e) => `${e.from} (${LAYERS[layerOf(e.from)]!.layer}) imports ${e.spec} (${LAYERS[layerOf(e.to)]!.layer})`);
  t.same(upward, [], 'imports against the layer order');
});

t.test('one door: http/ reaches the application only through app/, never storage, jobs, live state or the service', async (t) => {
  // Routes receive the application's capabilities (app/app.ts); the records those answer with are
  // named there too. So no import of any kind from the layers below app/, nor of the composition
  // root (app/service.ts), which only starts and stops things.
  const reaching = edges
    .filter((e) => e.from.startsWith('http/') && (/^(storage|jobs|live)\//.test(e.to) || e.to === 'app/service.ts'))
    .map((e) => `${e.from} imports ${e.spec}`);
  t.same(reaching, [], 'imports of storage, jobs, live state or the service from the HTTP layer');
  // Nor is a database, live state or the service reached by name through a re-export or an
  // inferred type: no such identifier appears in http/ at all.
  const FORBIDDEN = new Set([
    'Service',
    'startService',
    'Db',
    'Queryable',
    'Backend',
    'Tenants',
    'Tenant',
    'LiveTail',
    'DecisionLog',
    'Live',
    'RingWindows',
    'OrganizationData',
    'OrganizationTransactions',
    'OrganizationHistory',
    'OrganizationDecisions',
    'OrganizationOutcomes',
    'OrganizationRings',
    'OrganizationPerformance',
    'OrganizationLists',
    'OrganizationRules',
    'OrganizationWebhooks',
    'WebhookDeliverer',
    'DriftWatch',
    'SecretBox',
  ]);
  const named: string[] = [];
  for (const file of files.filter((f) => f.startsWith('http/'))) {
    const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, readFileSync(join(src, file), 'utf8'));
    for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan()) {
      if (k === ts.SyntaxKind.Identifier && FORBIDDEN.has(scanner.getTokenText())) named.push(`${file}: ${scanner.getTokenText()}`);
    }
  }
  t.same(named, [], 'database, live-state or service types named in the HTTP layer');
});

t.test('src/contract/ loads nothing with I/O', async (t) => {
  // The contract is schemas and their types: http/ and app/ build on it and the dashboard's program
  // reads it. So of packages it imports zod alone, and nothing it loads at run time (its value
  // imports, and theirs in turn) is storage/, jobs/, live/, addon/ or config.ts (which only main,
  // http and app see), or imports a Node module. A type-only import loads nothing, so a contract
  // type may still name a shape a lower layer writes (a job's summary).
  const contract = files.filter((f) => f.startsWith('contract/'));
  t.ok(contract.length > 0, `${contract.length} contract files read`);
  const foreign = contract.flatMap((f) =>
    packages
      .get(f)!
      .all.filter((spec) => spec !== 'zod')
      .map((spec) => `${f} imports ${spec}`),
  );
  t.same(foreign, [], 'packages other than zod imported by src/contract/');
  const loaded = new Map<string, string>(contract.map((f) => [f, f]));
  for (const [file, via] of loaded) {
    for (const e of edges) if (e.from === file && !e.typeOnly && !loaded.has(e.to)) loaded.set(e.to, `${via} → ${e.to}`);
  }
  const io = [...loaded].flatMap(([file, via]) => [
    ...(/^(storage|jobs|live|addon)\//.test(file) || file === 'config.ts' ? [`${via}`] : []),
    ...packages
      .get(file)!
      .loaded.filter((spec) => isBuiltin(spec))
      .map((spec) => `${via} imports ${spec}`),
  ]);
  t.same(io, [], 'I/O loaded by src/contract/, directly or through what it loads');
});

t.test('no import cycles', async (t) => {
  t.same(
    cycles().map((c) => c.join(' → ')),
    [],
    'files that import each other, directly or around a circle',
  );
});

t.test('src/ reaches outside itself only for the native addon, and only from src/addon/', async (t) => {
  const wrong = outside.filter((e) => !(e.to.startsWith('native/') && e.from.startsWith('addon/'))).map((e) => `${e.from} imports ${e.spec}`);
  t.same(wrong, [], 'src/ never imports tools/, bench/ or test/, and only src/addon/ loads native/');
  const lightgbm = outside.filter((e) => e.to.startsWith('native/lightgbm')).map((e) => `${e.from} imports ${e.spec}`);
  t.same(lightgbm, [], "the service loads its own build of the addon, never the LightGBM-enabled one (src/addon/lightgbm.ts's)");
});

t.test('tools/ holds command lines only, and bench/ stands on src/', async (t) => {
  // Every relative import of tools/ and bench/, by where it lands (root-relative).
  const landings = ['tools', 'bench'].flatMap((dir) =>
    sources(join(root, dir)).flatMap((file) => {
      const from = relative(root, file);
      return ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.map((r) => r.fileName)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => ({ from, spec, to: relative(root, resolve(dirname(file), spec)) }));
    }),
  );
  t.ok(landings.length > 50, `${landings.length} imports of tools/ and bench/ read`);
  const wrong = landings
    .filter(
      (e) =>
        !(
          e.to.startsWith('src/') ||
          (e.from.startsWith('bench/') && (e.to.startsWith('bench/') || e.to.startsWith('test/support/'))) ||
          e.to.startsWith('native/')
        ),
    )
    .map((e) => `${e.from} imports ${e.spec}`);
  // test/support/ is the harness benchmarks share with the tests: child processes, temporary
  // folders, a test server, a webhook receiver.
  t.same(wrong, [], 'a command imports src/ only; a benchmark src/, bench/ and test/support/ (never a command or a test)');
  // Nor does any test import a command's module (a test runs a command as a user does).
  const tests = sources(join(root, 'test')).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map((r) => r.fileName)
      .filter((spec) => spec.startsWith('.') && relative(root, resolve(dirname(file), spec)).startsWith('tools/'))
      .map((spec) => `${relative(root, file)} imports ${spec}`),
  );
  t.same(tests, [], 'tests import no module of tools/');
});

t.test('the check sees imports of every kind', async (t) => {
  // A guard against a reader that silently finds nothing: the composition root imports the
  // runner, a route imports a use case, and the addon wrapper loads the native module.
  t.ok(edges.length > 100, `${edges.length} imports read`);
  t.ok(
    outside.some((e) => e.from === 'addon/addon.ts' && e.to === 'native/index.js'),
    'addon/addon.ts loads native/index.js',
  );
  const sampleText =
    "import type { A } from './a.ts';\nexport { b } from '../b.ts';\nconst c = await import('./c.ts');\nimport type {\n  D,\n} from './d.ts';\n";
  const sample = ts.preProcessFile(sampleText, true, true).importedFiles.map((r) => r.fileName);
  t.same(sample, ['./a.ts', '../b.ts', './c.ts', './d.ts'], 'type-only imports, re-exports and dynamic imports are all read');
  t.same([...typeOnlySpecs(sampleText)], ['./a.ts', './d.ts'], 'type-only imports are told apart, over several lines too');
});
