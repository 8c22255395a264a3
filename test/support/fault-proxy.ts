// A TCP proxy on loopback between the service and PostgreSQL, for the fault tests: it forwards
// until told to misbehave the way networks and failovers do. `blackhole` stops forwarding in both
// directions without closing anything (new connections are accepted and held), as a partition or a
// stalled failover looks to a client; `resume` delivers what was held and forwards again. `cut`
// holds one direction only (a one-way partition: TCP delivers what was sent once it heals, or breaks
// the connection, but never loses bytes from the middle of a stream, so neither does the proxy). `latency` delays every chunk. `reset` ends every connection with a
// TCP reset, `close` with a clean FIN, and `resetOn` the connection that sends a given statement. Loopback only; `stop` closes the listener and every socket.

import { createServer, connect, type Server, type Socket } from 'node:net';

export type Direction = 'to_server' | 'to_client';

interface Pair {
  client: Socket;
  server: Socket | undefined;
  /** Chunks held while forwarding is stopped, per direction, in order. */
  held: { to_server: Buffer[]; to_client: Buffer[] };
  /** Delayed chunks waiting to go out, per direction, in order. */
  late: { to_server: Late[]; to_client: Late[] };
}

interface Late {
  chunk: Buffer;
  /** performance.now() when it may go out. */
  due: number;
}

/** Writes a queue's chunks as they fall due, the first one first. */
function pump(to: Socket, queue: Late[]): void {
  while (queue.length > 0 && queue[0]!.due <= performance.now()) {
    const { chunk } = queue.shift()!;
    if (!to.destroyed) to.write(chunk);
  }
  if (queue.length > 0) setTimeout(() => pump(to, queue), queue[0]!.due - performance.now());
}

export interface FaultProxy {
  /** The port the proxy listens on (127.0.0.1). */
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Connections open now. */
  connections(): number;
  blackhole(): void;
  /** Holds every byte sent in one direction from now on (connections stay open) until `resume`. */
  cut(direction: Direction): void;
  latency(ms: number): void;
  /** Forwards again, delivering what a blackhole held; ends a cut and any latency. */
  resume(): void;
  /** Ends every connection with a TCP reset (RST). */
  reset(): void;
  /** Ends every connection cleanly (FIN to both ends). */
  close(): void;
  /** Resets the next connection that sends `text` to the server, before the server sees it. */
  resetOn(text: string): void;
  stop(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const pairs = new Set<Pair>();
  /** Every socket not closed yet, the ended ones too: `stop` destroys them all (one left half-open
   *  kept the test process from exiting). */
  const sockets = new Set<Socket>();
  const track = (s: Socket): Socket => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    return s;
  };
  let holding = false;
  let cutting: Direction | undefined;
  let delayMs = 0;
  let trigger: string | undefined;

  const send = (pair: Pair, direction: Direction, chunk: Buffer): void => {
    if (trigger !== undefined && direction === 'to_server' && chunk.includes(trigger)) {
      trigger = undefined;
      end(pair, 'reset');
      return;
    }
    if (holding || cutting === direction) {
      pair.held[direction].push(chunk);
      return;
    }
    const to = direction === 'to_server' ? pair.server : pair.client;
    if (!to) {
      pair.held[direction].push(chunk);
      return;
    }
    if (delayMs === 0 && pair.late[direction].length === 0) {
      to.write(chunk);
      return;
    }
    // A delayed chunk is never overtaken, not even by one sent after the latency ended: each
    // direction's delayed chunks go out in order from one queue.
    const queue = pair.late[direction];
    queue.push({ chunk, due: performance.now() + delayMs });
    if (queue.length === 1) pump(to, queue);
  };

  /** Ends a pair: `reset` (RST) and `close` (FIN) are the faults; `drop` destroys what is left once
   *  one end has gone (a reset of a socket that is not open kept the test process from exiting). */
  const end = (pair: Pair, how: 'reset' | 'close' | 'drop'): void => {
    pairs.delete(pair);
    for (const s of [pair.client, pair.server]) {
      if (!s || s.destroyed) continue;
      if (how === 'reset' && s.readyState === 'open') s.resetAndDestroy();
      else if (how === 'close') s.end();
      else s.destroy();
    }
  };

  const openUpstream = (pair: Pair): void => {
    const server = track(connect(target.port, target.host));
    pair.server = server;
    server.on('data', (chunk: Buffer) => send(pair, 'to_client', chunk));
    server.on('error', () => end(pair, 'drop'));
    server.on('close', () => pairs.has(pair) && end(pair, 'close'));
    server.once('connect', () => flush(pair));
  };

  const flush = (pair: Pair): void => {
    if (holding || !pair.server) return;
    for (const direction of ['to_server', 'to_client'] as const) {
      if (cutting === direction) continue;
      const to = direction === 'to_server' ? pair.server : pair.client;
      for (const chunk of pair.held[direction].splice(0)) to.write(chunk);
    }
  };

  const listener: Server = createServer((client) => {
    track(client);
    const pair: Pair = { client, server: undefined, held: { to_server: [], to_client: [] }, late: { to_server: [], to_client: [] } };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => send(pair, 'to_server', chunk));
    client.on('error', () => end(pair, 'drop'));
    client.on('close', () => pairs.has(pair) && end(pair, 'close'));
    // A blackhole holds a new connection too: accepted (as a kernel would), never answered.
    if (!holding) openUpstream(pair);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (listener.address() as { port: number }).port;

  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    connections: () => pairs.size,
    blackhole() {
      holding = true;
    },
    cut(direction) {
      cutting = direction;
    },
    latency(ms) {
      delayMs = ms;
    },
    resume() {
      holding = false;
      cutting = undefined;
      delayMs = 0;
      for (const pair of pairs) {
        if (!pair.server) openUpstream(pair);
        else flush(pair);
      }
    },
    reset() {
      for (const pair of [...pairs]) end(pair, 'reset');
    },
    close() {
      for (const pair of [...pairs]) end(pair, 'close');
    },
    resetOn(text) {
      trigger = text;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      pairs.clear();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
