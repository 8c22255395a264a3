// Uploaded datasets: the files on disk and their rows in the database, with one owner for both.
// Files are written under `DATA_DIR/uploads/` with a random name the service chooses; no path is
// ever built from what a caller sent (the original name is kept as text only), so there is nothing
// to traverse. Ids are random (128 bits) and unguessable. A dataset past its retention, or deleted,
// loses its file at once and keeps its row, so that later requests can say what happened.

import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Db, Queryable } from './db.ts';
import type { ColumnMapping, ValidationResult } from '../datasets/csv.ts';
import { dropColumns } from '../datasets/columns.ts';

export interface DatasetRecord {
  id: string;
  original_name: string;
  stored_name: string;
  size_bytes: number;
  rows: number;
  has_labels: boolean;
  mapping: ColumnMapping;
  validation: ValidationResult;
  owner_user_id: string | null;
  organization_id: string | null;
  created_at: Date;
  expires_at: Date;
  removed: 'deleted' | 'expired' | null;
  removed_at: Date | null;
}

export class UploadTooLarge extends Error {}

export class DatasetFiles {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'uploads');
    mkdirSync(this.dir, { recursive: true });
  }

  /** The path of a stored file; `storedName` only ever comes from `newName` (checked). */
  path(storedName: string): string {
    if (!/^[a-f0-9]{32}\.csv$/.test(storedName)) throw new Error('not a stored dataset name');
    return join(this.dir, storedName);
  }

  newName(): string {
    return `${randomBytes(16).toString('hex')}.csv`;
  }

  /** Streams `body` to a new file, refusing (and removing) it past `maxBytes`. */
  async save(body: Readable, maxBytes: number): Promise<{ storedName: string; size: number }> {
    const storedName = this.newName();
    const path = this.path(storedName);
    let size = 0;
    const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    try {
      // The body is read by a generator rather than handed to the pipeline: refused part way, it is
      // let go without waiting for it to close, which a request stream that was already read whole
      // (a test's injected request) never does on Node 22 and later.
      await pipeline(async function* () {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > maxBytes) throw new UploadTooLarge(`over ${maxBytes} bytes`);
          yield chunk;
        }
      }, out);
    } catch (e) {
      // The file may still be opening when the pipeline fails (a body refused in its first chunk):
      // remove it once the stream has closed, or the open would create it after the removal.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await rm(path, { force: true });
      throw e;
    }
    return { storedName, size };
  }

  /** Removes a stored file and the rows its validation kept (columns.ts). */
  async remove(storedName: string): Promise<void> {
    const path = this.path(storedName);
    await rm(path, { force: true });
    await dropColumns(path);
  }
}

/** Files in the uploads directory that belong to no live dataset: an upload whose process died
 *  between storing the file and recording it, or whose validation failed unexpectedly, and kept
 *  rows (columns.ts) left by a crash mid-write. Files newer than `graceMs` are left alone (an
 *  upload may be between the two steps right now, in this or another process). Returns the
 *  names removed. */
export async function sweepOrphans(files: DatasetFiles, live: ReadonlySet<string>, now: number, graceMs: number): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(files.dir)) {
    const stored = /^([a-f0-9]{32}\.csv)(\.cols(\.partial)?)?$/.exec(name)?.[1];
    if (!stored || live.has(stored)) continue;
    const path = join(files.dir, name);
    const modified = await stat(path).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (modified === undefined || now - modified < graceMs) continue;
    await rm(path, { force: true });
    removed.push(name);
  }
  return removed;
}

/** Stored names of the datasets that still have their file. */
export async function liveStoredNames(db: Queryable): Promise<Set<string>> {
  const rows = await db.query<{ stored_name: string }>('SELECT stored_name FROM datasets WHERE removed IS NULL');
  return new Set(rows.map((r) => r.stored_name));
}

export function newDatasetId(): string {
  return `ds_${randomBytes(16).toString('base64url')}`;
}

const COLUMNS =
  'id, original_name, stored_name, size_bytes, rows, has_labels, mapping, validation, owner_user_id, organization_id, created_at, expires_at, removed, removed_at';

export async function insertDataset(db: Queryable, d: Omit<DatasetRecord, 'created_at' | 'removed' | 'removed_at'>): Promise<DatasetRecord> {
  const [row] = await db.query<DatasetRecord>(
    `INSERT INTO datasets (id, original_name, stored_name, size_bytes, rows, has_labels, mapping, validation, owner_user_id, organization_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
    [d.id, d.original_name, d.stored_name, d.size_bytes, d.rows, d.has_labels, d.mapping, d.validation, d.owner_user_id, d.organization_id, d.expires_at],
  );
  return row!;
}

/** An organization's datasets that still have their file, newest first. */
export async function datasetsOfOrganization(db: Queryable, organizationId: string, limit = 500): Promise<DatasetRecord[]> {
  return db.query<DatasetRecord>(`SELECT ${COLUMNS} FROM datasets WHERE organization_id = $1 AND removed IS NULL ORDER BY created_at DESC, id LIMIT $2`, [
    organizationId,
    limit,
  ]);
}

export async function getDataset(db: Queryable, id: string): Promise<DatasetRecord | undefined> {
  const [row] = await db.query<DatasetRecord>(`SELECT ${COLUMNS} FROM datasets WHERE id = $1`, [id]);
  return row;
}

export async function updateValidation(db: Queryable, id: string, mapping: ColumnMapping, validation: ValidationResult): Promise<DatasetRecord> {
  const [row] = await db.query<DatasetRecord>(
    `UPDATE datasets SET mapping = $2, validation = $3, rows = $4, has_labels = $5 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, mapping, validation, validation.rows, validation.has_labels],
  );
  return row!;
}

/** Marks a dataset removed; returns its stored name when this call removed it. */
export async function markRemoved(db: Queryable, id: string, how: 'deleted' | 'expired'): Promise<string | undefined> {
  const [row] = await db.query<{ stored_name: string }>(
    `UPDATE datasets SET removed = $2, removed_at = now() WHERE id = $1 AND removed IS NULL RETURNING stored_name`,
    [id, how],
  );
  return row?.stored_name;
}

/** Marks every dataset past its retention expired; returns their stored names (files to delete). */
export async function expireDue(db: Db, now: Date): Promise<string[]> {
  const rows = await db.query<{ stored_name: string }>(
    `UPDATE datasets SET removed = 'expired', removed_at = $1 WHERE removed IS NULL AND expires_at <= $1 RETURNING stored_name`,
    [now],
  );
  return rows.map((r) => r.stored_name);
}
