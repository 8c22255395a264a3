// The parsed rows of a validated upload, kept next to its file (`<stored>.csv.cols`) so that the
// job that scores it does not parse the CSV a second time: validation reads every row anyway, and
// parsing was a fifth of a job (bench/README.md, bench:batch). The file holds the rows as the
// job's column store (records.ts) for one column mapping; a job whose mapping differs, or that
// finds the file missing, damaged or from another version, parses the CSV as before. The file is
// written whole under a temporary name and renamed, and removed with its upload (store.ts).
//
// Layout: "FRSCOLS1", the header's length (u32, little-endian), the header (JSON: mapping key,
// row count, string tables, id bytes), zero padding to a multiple of 8, then the columns in
// `SECTIONS` order, each as little-endian typed-array bytes, then the ids' UTF-8 bytes.

import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { RecordStore, type RecordImage } from '../engine/records.ts';
import type { HistoryTransaction } from '../engine/history.ts';
import { validateCsv, type ColumnMapping, type ParsedRow, type ValidateOptions, type ValidationResult } from './csv.ts';

const MAGIC = Buffer.from('FRSCOLS1');

type Section = 'times' | 'amounts' | 'customers' | 'merchants' | 'locations' | 'paymentTypes' | 'idOffsets' | 'labels';
/** Each column, its element type and how many elements it has for `n` rows. */
const SECTIONS: [Section, Float64ArrayConstructor | Int32ArrayConstructor | Int8ArrayConstructor, (n: number) => number][] = [
  ['times', Float64Array, (n) => n],
  ['amounts', Float64Array, (n) => n],
  ['customers', Int32Array, (n) => n],
  ['merchants', Int32Array, (n) => n],
  ['locations', Int32Array, (n) => n],
  ['paymentTypes', Int32Array, (n) => n],
  ['idOffsets', Int32Array, (n) => n + 1],
  ['labels', Int8Array, (n) => n],
];

interface Header {
  key: string;
  count: number;
  entities: readonly string[];
  places: readonly string[];
  idBytes: number;
}

export function columnsPath(csvPath: string): string {
  return `${csvPath}.cols`;
}

/** The mapping as the file records it: its entries in a fixed order, unset ones left out. */
function mappingKey(mapping: ColumnMapping): string {
  return JSON.stringify(Object.entries(mapping).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** A parsed row as a record of the column store (no timestamp: NaN, which the job replaces). */
export function toRecord(r: ParsedRow): HistoryTransaction {
  const tx: HistoryTransaction = { time: r.time ?? Number.NaN, amount: r.amount, customer_id: r.customer_id, merchant_id: r.merchant_id, location: r.location, payment_type: r.payment_type, transaction_id: r.transaction_id };
  if (r.label !== undefined) tx.label = r.label;
  return tx;
}

async function keepColumns(csvPath: string, mapping: ColumnMapping, store: RecordStore): Promise<void> {
  const image = store.image();
  const header: Header = { key: mappingKey(mapping), count: image.count, entities: image.entities, places: image.places, idBytes: image.idBytes.length };
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  const padding = Buffer.alloc((8 - ((MAGIC.length + 4 + json.length) % 8)) % 8);
  const parts: Uint8Array[] = [MAGIC, length, json, padding];
  for (const [name] of SECTIONS) {
    const a = image[name];
    parts.push(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  }
  parts.push(image.idBytes);
  const path = columnsPath(csvPath);
  const temporary = `${path}.partial`;
  try {
    await writeFile(temporary, parts, { mode: 0o600 });
    await rename(temporary, path);
  } catch (e) {
    await rm(temporary, { force: true });
    throw e;
  }
}

/** The rows kept for `mapping` at validation, or undefined when there are none to use (no file,
 *  another mapping, or a file that does not read back whole). */
export async function loadColumns(csvPath: string, mapping: ColumnMapping): Promise<RecordStore | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(columnsPath(csvPath));
  } catch {
    return undefined;
  }
  try {
    if (bytes.length < MAGIC.length + 4 || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    const headerLength = bytes.readUInt32LE(MAGIC.length);
    let at = MAGIC.length + 4;
    const header = JSON.parse(bytes.toString('utf8', at, at + headerLength)) as Header;
    if (header.key !== mappingKey(mapping)) return undefined;
    at += headerLength;
    at += (8 - (at % 8)) % 8;
    const image: Partial<RecordImage> = { count: header.count, entities: header.entities, places: header.places };
    for (const [name, Type, size] of SECTIONS) {
      const byteLength = size(header.count) * Type.BYTES_PER_ELEMENT;
      if (at + byteLength > bytes.length) return undefined;
      // Copied out, so each column is aligned for its type whatever the buffer's own offset.
      (image as Record<string, unknown>)[name] = new Type((bytes.buffer as ArrayBuffer).slice(bytes.byteOffset + at, bytes.byteOffset + at + byteLength));
      at += byteLength;
    }
    if (at + header.idBytes !== bytes.length) return undefined;
    image.idBytes = bytes.subarray(at);
    return RecordStore.fromImage(image as RecordImage);
  } catch {
    return undefined;
  }
}

/** Removes an upload's kept rows, if any. */
export async function dropColumns(csvPath: string): Promise<void> {
  await rm(columnsPath(csvPath), { force: true });
}

/** Validates an upload (csv.ts) and, when it can be scored, keeps its parsed rows for the job;
 *  a file that does not validate keeps none (an earlier mapping's rows are removed). Failing to
 *  write them costs the job a parse, nothing else. */
export async function validateAndKeep(csvPath: string, options: ValidateOptions): Promise<ValidationResult> {
  const store = new RecordStore();
  const result = await validateCsv(csvPath, { ...options, collect: (row) => store.push(toRecord(row)) });
  if (result.valid) await keepColumns(csvPath, options.mapping ?? {}, store).catch(() => dropColumns(csvPath).catch(() => undefined));
  else await dropColumns(csvPath);
  return result;
}
