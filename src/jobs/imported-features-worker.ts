// The thread that replays an organization's history for its imported transactions' features
// (imported-features.ts starts one per run). The replay is the CPU of the job (the feature code,
// the history it grows, the collections of that history) and its pages' decoding; here it runs
// beside the event loop that answers the organization's scores, at the lowest CPU priority. On
// PostgreSQL the thread reads the pages and stores the features on connections of its own; on the
// embedded database, whose one connection is the process's, it asks the main thread for each page
// and hands it each batch to store. After each page it reports its progress and waits to be told
// whether to go on (a stopped job stops between pages, as it always did).

import { constants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { allocateFeatures, writeFeatures } from '../domain/features/extract.ts';
import { History } from '../domain/history/history.ts';
import { storedFeatures, storedWidth } from '../scoring/stored-features.ts';
import type { Db } from '../storage/db.ts';
import { messageOf } from '../storage/errors.ts';
import { type FeatureBatch, parseReplayPage } from '../storage/imported-features.ts';
import { historyTransaction } from '../storage/live-rows.ts';
import { organizationData } from '../storage/organization-data.ts';
import { openPostgres } from '../storage/postgres.ts';
import type { FromReplay, ToReplay } from './imported-features.ts';

// This thread only (on Linux a thread has a priority of its own): requests before the replay.
setPriority(constants.priority.PRIORITY_LOW);

/** Imported transactions whose features go to the database in one statement: on the embedded
 *  database, whose one connection the organization's scores share, none waits behind more. */
const STORE_ROWS = 500;

const port = parentPort!;
const send = (m: FromReplay, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

/** Where pages come from and batches go: this thread's own connections, or the main thread. */
interface Pages {
  read(after: [number, number] | undefined): Promise<string | null>;
  store(batch: FeatureBatch): Promise<number>;
  close(): Promise<void>;
}

/** This thread's requests to the main thread not answered yet, by id. */
const waiting = new Map<number, (m: ToReplay) => void>();
let nextRequest = 1;

/** A request before it is numbered: each kind of request without its `id`. */
type WithoutId<R> = R extends unknown ? Omit<R, 'id'> : never;
type Request = WithoutId<Extract<FromReplay, { id: number }>>;

function ask(m: Request, transfer: ArrayBuffer[] = []): Promise<ToReplay> {
  const id = nextRequest++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ ...m, id } as FromReplay, transfer);
  });
}

const byMessages: Pages = {
  async read(after) {
    const m = await ask({ kind: 'read', after });
    return m.kind === 'page' ? m.text : null;
  },
  async store(batch) {
    const m = await ask({ kind: 'store', batch }, [batch.bytes.buffer as ArrayBuffer]);
    return m.kind === 'stored' ? m.count : 0;
  },
  async close() {},
};

function ownConnections(db: Db, organizationId: string): Pages {
  const data = organizationData(db, organizationId).importedFeatures;
  return { read: (after) => data.pageText(after), store: (batch) => data.store(batch), close: () => db.close() };
}

async function replay(m: Extract<ToReplay, { kind: 'start' }>): Promise<void> {
  const pages = m.address ? ownConnections(await openPostgres(m.address.url, m.address.statementTimeoutMs / 1000), m.organizationId) : byMessages;
  try {
    const history = new History(m.labelDelay).withRecords();
    const features = allocateFeatures(1);
    const width = storedWidth(m.channels) * Float32Array.BYTES_PER_ELEMENT;
    let stored = 0;
    // The next page is read while this one is replayed, and a batch stored while the next is
    // computed: the thread's CPU and the database's work overlap.
    let reading = pages.read(undefined);
    let storing: Promise<number> | undefined;
    for (;;) {
      const text = await reading;
      if (text === null) break;
      const page = parseReplayPage(text);
      const last = page[page.length - 1]!;
      reading = pages.read([last.time, last.seq]);
      for (let from = 0; from < page.length; from += STORE_ROWS) {
        const slice = page.slice(from, from + STORE_ROWS);
        const bytes = new Uint8Array(width * slice.reduce((n, r) => n + (r.featureless ? 1 : 0), 0));
        const seqs: number[] = [];
        for (const r of slice) {
          const tx = historyTransaction(r);
          if (r.featureless) {
            writeFeatures(tx, history, features, 0);
            const row = storedFeatures(m.channels, features);
            bytes.set(new Uint8Array(row.buffer, row.byteOffset, width), seqs.length * width);
            seqs.push(r.seq);
          }
          history.add(tx);
        }
        if (storing) stored += await storing;
        storing = pages.store({ seqs, bytes });
      }
      if (storing) stored += await storing;
      storing = undefined;
      const answer = await ask({ kind: 'progress', stored });
      if (answer.kind === 'next' && answer.stop) break;
    }
    // A read begun for a page the replay no longer wants (it stopped) is left to end alone.
    reading.catch(() => {});
    send({ kind: 'done', stored });
  } finally {
    await pages.close();
  }
}

port.on('message', (m: ToReplay) => {
  if (m.kind === 'start') {
    replay(m).catch((err) => send({ kind: 'failed', message: messageOf(err) }));
  } else {
    const resolve = waiting.get(m.id);
    waiting.delete(m.id);
    resolve?.(m);
  }
});
