// Where the server's log lines go: standard output (the request log) and standard error (start-up
// and shutdown lines), written so that a destination that stops reading can never stop the server.
// Node writes to a pipe synchronously on Linux, and pino's default destination flushes
// synchronously at exit: with a stalled log shipper, a full container log pipe or `npm start | …`
// whose reader stopped, a request (or a SIGTERM) then waits for ever. Here a pipe or socket is
// written through an asynchronous stream of its own, and a file or terminal through an
// asynchronous file stream; what the destination has not taken yet is held up to a bound
// (LOG_BUFFER_BYTES), past which lines are dropped and counted (the count is written once the
// destination reads again). Nothing waits for the log at exit.

import { createWriteStream, fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';

/** Log bytes held for a destination that is not reading, at most. */
export const LOG_BUFFER_BYTES = 1 << 20;

export class LogStream {
  private readonly maxBuffered: number;

  private readonly out: Writable;
  /** Lines dropped since the destination last took one. */
  private dropped = 0;
  /** Lines dropped since the start. */
  droppedTotal = 0;
  private broken = false;

  constructor(fd: number, maxBuffered = LOG_BUFFER_BYTES) {
    this.maxBuffered = maxBuffered;
    const stat = fstatSync(fd);
    this.out = stat.isFIFO() || stat.isSocket() ? new Socket({ fd, readable: false, writable: true }) : createWriteStream('', { fd, autoClose: false });
    // A reader that went away (EPIPE) or an unwritable destination: stop logging, keep serving.
    this.out.on('error', () => {
      this.broken = true;
    });
    // A socket on the process's own descriptor must not keep the process alive.
    if (this.out instanceof Socket) this.out.unref();
  }

  /** Writes one line (pino calls this with each formatted line). */
  write(line: string): void {
    if (this.broken) return;
    if (this.out.writableLength + line.length > this.maxBuffered) {
      this.dropped++;
      this.droppedTotal++;
      return;
    }
    if (this.dropped > 0) {
      this.out.write(`${JSON.stringify({ level: 40, time: Date.now(), msg: `${this.dropped} log line(s) dropped: the log destination was not reading` })}\n`);
      this.dropped = 0;
    }
    this.out.write(line);
  }

  /** Bytes written but not yet taken by the destination. */
  get pending(): number {
    return this.out.writableLength;
  }
}

/** Resolves once every log stream of the process has handed its lines over, or after `ms`:
 *  an exit gives its last lines a moment, never more. */
export async function drainLogs(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while ((stdout?.pending ?? 0) + (stderr?.pending ?? 0) > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
}

let stdout: LogStream | undefined;
let stderr: LogStream | undefined;

/** The process's standard output as a log stream (one per process). */
export function stdoutLog(): LogStream {
  return (stdout ??= new LogStream(1));
}

/** The process's standard error as a log stream (one per process). */
export function stderrLog(): LogStream {
  return (stderr ??= new LogStream(2));
}
