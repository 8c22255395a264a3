// One webhook attempt when the receiver closes a kept-alive connection just as the next delivery
// goes out on it (a server's or a load balancer's idle timeout meeting a retry): the request is sent
// again at once on a new connection, and the attempt succeeds; nothing answered on a fresh
// connection is sent twice. A raw TCP receiver on loopback plays the closing server exactly.

import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { WebhookSender } from '../../src/jobs/webhook-send.ts';

const SECRET = `whsec_${Buffer.from('s'.repeat(32)).toString('base64')}`;
const event = { id: 'evt_1', body: '{"id":"evt_1"}' };

/** Answers each connection's first request (kept alive) and, as `second` says, resets the
 *  connection when a second request arrives on it, or answers that too. */
async function receiver(second: 'reset' | 'answer') {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    let served = 0;
    socket.on('data', (d) => {
      buffered += d.toString('latin1');
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.slice(end + 4 + length);
        requests++;
        if (++served > 1 && second === 'reset') return void socket.resetAndDestroy();
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\nok');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    counts: () => ({ connections, requests }),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A receiver and a sender to it, both closed when the test ends. */
async function senderTo(t: { teardown(fn: () => unknown): void }, second: 'reset' | 'answer') {
  const r = await receiver(second);
  const sender = new WebhookSender({ allowPrivateNetworks: true }, 5_000, 'test');
  t.teardown(async () => {
    sender.close();
    await r.close();
  });
  return { r, sender };
}

t.test('a kept-alive connection reset as a delivery goes out on it: sent again on a new one', async (t) => {
  const { r, sender } = await senderTo(t, 'reset');
  t.match(await sender.send(r.url, event, [SECRET]), { statusCode: 200, error: null }, 'the first delivery');
  t.match(await sender.send(r.url, event, [SECRET]), { statusCode: 200, error: null, responseExcerpt: 'ok' }, 'the next succeeds all the same');
  t.same(r.counts(), { connections: 2, requests: 3 }, 'on a new connection, once');
});

t.test('a connection that answers is reused, and a fresh one that fails is not tried again', async (t) => {
  const { r, sender } = await senderTo(t, 'answer');
  await sender.send(r.url, event, [SECRET]);
  await sender.send(r.url, event, [SECRET]);
  t.same(r.counts(), { connections: 1, requests: 2 }, 'kept alive');
  const closed = await receiver('answer');
  const url = closed.url;
  await closed.close();
  t.match(await sender.send(url, event, [SECRET]), { statusCode: null, error: 'connection_failed' }, 'nothing listening: one failed attempt');
});
