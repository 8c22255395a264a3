// Binary COPY data (src/storage/copy-binary.ts) as PostgreSQL reads it, and its writer: every byte
// reaches a slow stream in order, waiting while it is full; a stream that fails while the writer
// waits for a turn of the event loop is a rejection with its error, never an 'error' event nobody
// hears. Its reader takes the same rows back from chunks cut anywhere. (That the server stores what
// it reads is test/storage/db.test.ts's bulk write; that a history loads from what it sends,
// test/storage/history-copy.test.ts.)

import t from 'tap';
import { Writable } from 'node:stream';
import { COPY_SLICE_BYTES, CopyReader, copyChunks, sqlLiteral, writeCopy } from '../../src/storage/copy-binary.ts';

/** Every chunk an async generator yields. */
async function collect<T>(chunks: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

const columns = [
  { name: 'name', type: 'text' },
  { name: 'piece', type: 'int4' },
  { name: 'bytes', type: 'bytea' },
] as const;

t.test('the format: signature, rows of lengths and values, -1 at the end; large values in slices', async (t) => {
  const big = Buffer.alloc(COPY_SLICE_BYTES * 2 + 5, 7);
  const chunks = await collect(
    copyChunks(columns, [
      ['é', -3, Buffer.from([1, 2])],
      ['x', 9, null],
      ['y', 1, big],
    ]),
  );
  const all = Buffer.concat(chunks);
  t.same([...all.subarray(0, 19)], [...Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), 0, 0, 0, 0, 0, 0, 0, 0], 'signature, flags and header extension');
  let at = 19;
  const int16 = () => {
    at += 2;
    return all.readInt16BE(at - 2);
  };
  const int32 = () => {
    at += 4;
    return all.readInt32BE(at - 4);
  };
  const bytes = (n: number) => {
    at += n;
    return all.subarray(at - n, at);
  };
  t.equal(int16(), 3, 'a row has three fields');
  t.equal(int32(), 2, 'text as its UTF-8 length');
  t.equal(bytes(2).toString('utf8'), 'é');
  t.same([int32(), int32()], [4, -3], 'int4 as four big-endian bytes');
  t.equal(int32(), 2);
  t.same([...bytes(2)], [1, 2], 'bytea as it is');
  t.equal(int16(), 3);
  t.equal(int32(), 1);
  bytes(1);
  t.same([int32(), int32()], [4, 9]);
  t.equal(int32(), -1, 'a missing value is -1');
  t.equal(int16(), 3);
  int32();
  bytes(1);
  int32();
  int32();
  t.equal(int32(), big.length);
  t.ok(bytes(big.length).equals(big), 'the large value whole');
  t.equal(int16(), -1, 'the end');
  t.equal(at, all.length, 'and nothing after it');
  const slices = chunks.filter((c) => c.buffer === big.buffer);
  t.same(
    slices.map((c) => c.length),
    [COPY_SLICE_BYTES, COPY_SLICE_BYTES, 5],
    'the large value in slices, views of it (no copy)',
  );
  await t.rejects(collect(copyChunks(columns, [['a', 1.5, null]])), /not a whole number/, 'a fraction refused for int4');
});

t.test('every byte reaches a slow stream, in order', async (t) => {
  const got: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, callback) {
      got.push(Buffer.from(chunk));
      setTimeout(callback, 1);
    },
  });
  const big = Buffer.alloc(COPY_SLICE_BYTES * 3 + 11);
  for (let i = 0; i < big.length; i++) big[i] = i & 0xff;
  const rows = [
    ['a', 1, big],
    ['b', 2, big.subarray(3)],
  ];
  await writeCopy(stream, copyChunks(columns, rows));
  t.ok(Buffer.concat(got).equals(Buffer.concat(await collect(copyChunks(columns, rows)))), 'the stream got exactly the COPY data');
});

t.test("a paced write sends at most its bytes a second beyond the first second's, and answers meanwhile", async (t) => {
  let bytes = 0;
  const stream = new Writable({
    write(chunk: Buffer, _enc, callback) {
      bytes += chunk.length;
      callback();
    },
  });
  const big = Buffer.alloc(COPY_SLICE_BYTES * 8);
  const rate = 2 * COPY_SLICE_BYTES; // eight slices: the first two at once, six at two a second: three seconds
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const began = performance.now();
  await writeCopy(stream, copyChunks(columns, [['a', 1, big]]), rate);
  const took = performance.now() - began;
  clearInterval(timer);
  t.ok(took >= 2_700, `${Math.round(took)} ms for ${bytes} bytes at ${rate} a second`);
  t.ok(ticks >= 100, `a 10 ms timer ran ${ticks} times meanwhile`);
  t.equal(bytes, Buffer.concat(await collect(copyChunks(columns, [['a', 1, big]]))).length, 'every byte sent');
  let smallBytes = 0;
  const second = new Writable({
    write(chunk: Buffer, _enc, callback) {
      smallBytes += chunk.length;
      callback();
    },
  });
  const small = performance.now();
  await writeCopy(second, copyChunks(columns, [['b', 2, Buffer.alloc(COPY_SLICE_BYTES)]]), rate);
  t.ok(performance.now() - small < 500 && smallBytes > COPY_SLICE_BYTES, "a write within a second's worth is not held back");
});

t.test('a stream that fails while the writer waits is a rejection, not an unheard error', async (t) => {
  let writes = 0;
  const stream = new Writable({
    write(_chunk, _enc, callback) {
      // The third chunk is never taken: the connection is reset while the writer waits for room.
      if (++writes === 3) return void setImmediate(() => stream.destroy(new Error('connection reset')));
      callback();
    },
  });
  const big = Buffer.alloc(COPY_SLICE_BYTES * 40);
  const outcome = await writeCopy(stream, copyChunks(columns, [['a', 1, big]])).then(
    () => 'resolved',
    (e: Error) => e.message,
  );
  t.equal(outcome, 'connection reset', 'rejected with the stream’s error');
});

t.test('the reader takes rows from chunks cut anywhere, NULLs as -1, and stops at the trailer', async (t) => {
  const rows: (readonly unknown[])[] = [
    ['é🙂', 1, Buffer.from([9, 8, 7])],
    ['', -2, null],
    ["o'Brien\\", 2_000_000, Buffer.alloc(300, 3)],
  ];
  const all = Buffer.concat(await collect(copyChunks(columns, rows)));
  const read = (cuts: number[]) => {
    const reader = new CopyReader(3);
    const got: unknown[][] = [];
    let from = 0;
    for (const to of [...cuts, all.length]) {
      reader.push(all.subarray(from, to), (bytes) => {
        const field = (f: number) => (reader.lengths[f]! < 0 ? null : Buffer.from(bytes.subarray(reader.starts[f]!, reader.starts[f]! + reader.lengths[f]!)));
        got.push([field(0)!.toString('utf8'), field(1)!.readInt32BE(0), field(2)]);
      });
      from = to;
    }
    return { got, ended: reader.ended };
  };
  const whole = read([]);
  t.same(whole.got, rows, 'in one chunk');
  t.ok(whole.ended, 'the trailer read');
  // Every cut: inside the signature, a count, a length and a value.
  let every = true;
  for (let cut = 1; cut < all.length; cut++) {
    const r = read([cut]);
    if (JSON.stringify(r.got) !== JSON.stringify(rows) || !r.ended) every = false;
  }
  t.ok(every, 'cut at each of its bytes, the same rows');
  t.same(read(Array.from({ length: all.length - 1 }, (_, i) => i + 1)).got, rows, 'a byte a chunk');
  const unfinished = new CopyReader(3);
  unfinished.push(all.subarray(0, all.length - 2), () => {});
  t.notOk(unfinished.ended, 'without its trailer the data is not complete');
  t.throws(() => new CopyReader(2).push(all, () => {}), /3 fields where 2 were expected/, 'a row of another width is refused');
  t.throws(() => new CopyReader(3).push(Buffer.from('PGCOPY\nxxxxxxxxxxxxxxxxxxxxxxxx'), () => {}), /signature/, 'data of another format is refused');
});

t.test('a literal for a statement without parameters is the value itself', async (t) => {
  t.equal(sqlLiteral(-1.5e21), '-1.5e+21');
  t.equal(sqlLiteral("it's"), "E'it''s'");
  t.equal(sqlLiteral('a\\b'), "E'a\\\\b'");
  t.throws(() => sqlLiteral(Number.NaN), /literal/);
  t.throws(() => sqlLiteral('a\0b'), /NUL/);
});
