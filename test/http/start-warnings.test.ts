// A server started as `npm start` starts it (src/main.ts in its own process) writes no warning of
// Node or Fastify to standard error: no deprecation (FSTDEP023 was written at every start while the
// request log was turned off through a deprecated option), no other process warning. Operators read
// standard error at start; a warning there every time teaches them to ignore it. The server also
// answers, so the start that was checked is a working one.

import t from 'tap';
import { spawnServer } from '../support/processes.ts';

t.test('a started server writes no warning to standard error', async (t) => {
  // Node's --trace-deprecation and --trace-warnings print where a warning comes from, should one
  // come back: the failure then names its cause.
  const server = await spawnServer({ NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --trace-deprecation --trace-warnings`.trim() });
  t.teardown(() => server.stop());
  const health = await fetch(`${server.base}/api/health`);
  t.equal(health.status, 200, 'it answers');
  t.ok(health.headers.get('request-id'), 'with a request id');
  // A moment for anything written after the first answer (warnings are written on the next tick).
  await new Promise((r) => setTimeout(r, 300));
  const stderr = server.stderr();
  t.match(stderr, /ready on /, 'standard error has the start lines');
  t.notMatch(
    stderr,
    /DeprecationWarning|FSTDEP\d+|FastifyDeprecation|FastifyWarning|ExperimentalWarning|\(node:\d+\) \[/,
    `no warning: ${stderr.slice(0, 2000)}`,
  );
  t.equal(await server.stop(), 0, 'and it stops cleanly');
});
