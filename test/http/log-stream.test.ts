// The log stream over a pipe that stops being read (a FIFO whose reader is idle): writes never
// block, what waits for the reader stays under the bound while further lines are dropped and
// counted, and once the reader drains the pipe the count of dropped lines is written.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { LogStream } from '../../src/http/log-stream.ts';
import { tempDir } from '../support/temp.ts';

t.test('a stalled pipe: bounded memory, dropped lines counted, nothing blocks', async (t) => {
  const fifo = join(tempDir('fifo-'), 'log');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  t.teardown(() => {
    closeSync(reader);
    closeSync(writer);
  });
  const bound = 256 * 1024;
  const log = new LogStream(writer, bound);
  const line = `${JSON.stringify({ level: 30, msg: 'x'.repeat(300) })}\n`;
  const started = performance.now();
  for (let i = 0; i < 20_000; i++) log.write(line);
  t.ok(performance.now() - started < 2000, 'writing 6 MB of lines to a full pipe returns at once');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(log.pending <= bound, `at most the bound waits for the reader (${log.pending} bytes)`);
  t.ok(log.droppedTotal > 10_000, `the rest was dropped and counted (${log.droppedTotal})`);

  // The reader comes back: drain the pipe, write again, and find the count.
  let text = '';
  const buffer = Buffer.alloc(1 << 16);
  const until = Date.now() + 5000;
  while (Date.now() < until && !text.includes('dropped')) {
    try {
      const n = readSync(reader, buffer);
      text += buffer.toString('utf8', 0, n);
    } catch {
      // EAGAIN: nothing to read this moment.
    }
    if (log.pending === 0) log.write(line);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.match(text, /"msg":"\d+ log line\(s\) dropped: the log destination was not reading"/, 'the drop is reported once the destination reads again');
});
