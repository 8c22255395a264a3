// A request that arrives while the server drains (after a stop began, on a connection still open
// because a request on it was in flight) is answered 503 `shutting_down` in the service's error
// shape, with `Connection: close`, not Fastify's own body; the request in flight completes.

import t from 'tap';
import { connect } from 'node:net';
import { start } from '../support/server.ts';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a request arriving while the server drains: 503 shutting_down in the error shape', async (t) => {
  const s = await start();
  t.teardown(() => s.service.close());
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (s.app.server.address() as { port: number }).port;
  const socket = connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (c) => (received += c));
  const closed = new Promise((r) => socket.on('close', r));

  // An upload whose body is still to come keeps the connection busy while the stop begins: the
  // stop begins once the server has read its headers (however long a busy host takes to).
  const csv = 'amount,customer_id,merchant_id\n1,C,M\n';
  const inFlight = new Promise((r) => s.app.server.once('request', r));
  socket.write(`POST /api/datasets/upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: ${csv.length}\r\n\r\n`);
  await inFlight;
  const stopping = s.app.close();
  await delay(100);
  // The body, then a second request on the same connection.
  socket.write(`${csv}GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n`);
  await Promise.race([closed, delay(10_000)]);
  await stopping;

  const answers = received.split(/(?=HTTP\/1\.1 \d{3})/);
  t.equal(answers.length, 2, 'two answers');
  t.match(answers[0], /^HTTP\/1\.1 201 /, 'the upload in flight completes');
  t.match(answers[1], /^HTTP\/1\.1 503 /, 'the request after the stop began: 503');
  t.match(answers[1], /\r\nconnection: close\r\n/i, 'and the connection closes');
  const body = JSON.parse(answers[1]!.split('\r\n\r\n')[1]!);
  t.equal(body.detail.reason, 'shutting_down');
  t.match(body.detail.fix, /again/);
});
