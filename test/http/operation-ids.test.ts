// The OpenAPI reference as a client generator reads it (/api/docs/json over HTTP): every operation
// has an operationId, camelCase, unique, and a real name (the table in src/http/operation-ids.ts or
// the route's own `schema.operationId`), never the one derived from its path, which a route missing
// from the table gets (and which would change with the path): this test names every such route.
// The document always names a server: BACKEND_URL when set, otherwise `/` (the origin the document
// was read from).

import t from 'tap';
import { start } from '../support/server.ts';
import { derivedOperationId, documentedPath, OPERATION_IDS, operationIdOf } from '../../src/http/operation-ids.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

async function reference(overrides = {}): Promise<any> {
  const s = await start({ overrides });
  try {
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`http://127.0.0.1:${(s.app.server.address() as { port: number }).port}/api/docs/json`);
    return await res.json();
  } finally {
    await s.close();
  }
}

t.test('every operation has a unique, readable operationId', async (t) => {
  const doc = await reference();
  const seen = new Map<string, string>();
  const unnamed: string[] = [];
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      operations++;
      const where = `${method.toUpperCase()} ${path}`;
      const id = op.operationId;
      if (!id) {
        t.fail(`${where} has no operationId`);
        continue;
      }
      if (!/^[a-z][A-Za-z0-9]*$/.test(id)) t.fail(`${where}: operationId ${id} is not camelCase`);
      if (id === derivedOperationId(method, path)) unnamed.push(`${where} (now ${id})`);
      if (seen.has(id)) t.fail(`${where}: operationId ${id} is also ${seen.get(id)}'s`);
      seen.set(id, where);
    }
  }
  t.ok(operations >= 66, `the whole reference (${operations} operations)`);
  t.same(
    unnamed,
    [],
    `routes without a name: add each to OPERATION_IDS in src/http/operation-ids.ts (or give its schema an operationId): ${unnamed.join(', ')}`,
  );
  t.equal(doc.paths['/api/risk/score'].post.operationId, 'scoreTransaction');
  t.equal(doc.paths['/api/v1/risk/score'].post.operationId, 'scoreAndRecordTransaction');
  t.equal(doc.paths['/api/organizations/{id}/transactions'].get.operationId, 'listTransactions');
});

t.test("the table's names are unique and camelCase, and a route missing from it still gets one", async (t) => {
  const ids = Object.values(OPERATION_IDS);
  t.equal(new Set(ids).size, ids.length, 'no name twice');
  for (const id of ids) if (!/^[a-z][A-Za-z0-9]*$/.test(id)) t.fail(`${id} is not camelCase`);
  t.equal(documentedPath('/api/organizations/:id/rules/:rule_id'), '/api/organizations/{id}/rules/{rule_id}');
  t.equal(operationIdOf('post', '/api/organizations/:id/rules'), 'createRule', "a route in the table: the table's name");
  t.equal(operationIdOf('GET', '/api/v9/things/:thing_id/parts'), 'getApiV9ThingsByThingIdParts', 'a route missing from it: a name from its method and path');
});

t.test('the document names a server: `/` by default, BACKEND_URL when set', async (t) => {
  t.same(
    (await reference()).servers.map((s: { url: string }) => s.url),
    ['/'],
  );
  t.same(
    (await reference({ BACKEND_URL: 'https://api.example.com/' })).servers.map((s: { url: string }) => s.url),
    ['https://api.example.com'],
  );
});

t.test('every documented answer names Request-Id, and the rate-limited ones their window', async (t) => {
  const doc = await reference();
  const missing: string[] = [];
  for (const [path, item] of Object.entries(
    doc.paths as Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>>,
  )) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      for (const [status, r] of Object.entries(op.responses ?? {})) if (!r.headers?.['request-id']) missing.push(`${method.toUpperCase()} ${path} ${status}`);
    }
  }
  t.same(missing, [], 'Request-Id on every response');
  for (const [path, method] of [
    ['/api/risk/score', 'post'],
    ['/api/v1/risk/score', 'post'],
    ['/api/datasets/upload', 'post'],
  ] as const) {
    t.ok(
      doc.paths[path][method].responses['200' in doc.paths[path][method].responses ? '200' : '201'].headers['x-ratelimit-remaining'],
      `${method.toUpperCase()} ${path}: X-RateLimit-* documented`,
    );
  }
  t.notOk(doc.paths['/api/health'].get.responses['200'].headers['x-ratelimit-limit'], 'and only there');
});
