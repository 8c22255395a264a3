// Storing recorded transactions: the one INSERT statement that both writers use, an organization's
// own (`insertTransactions`, through OrganizationData's transactions) and the decision log's group
// commit of several organizations (recorded-group.ts).
//
// Speed: inserts send whole columns as arrays through UNNEST. Response bodies are stored
// raw-deflated (level 1: cheap to compute, and a fraction of the JSON's size). The binary columns
// (the response, the features, the decision's inputs) travel as one bytea parameter that the
// statement cuts with `substring`, each column giving where its values start and how long they
// are: as text arrays of base64, PostgreSQL would spend more time parsing and decoding them than
// inserting the rows.

import { deflateRawSync } from 'node:zlib';
import type { Queryable } from './db.ts';
import { StorageError } from './errors.ts';
import { FEED_SENDER, notifyFeed } from './live-feed.ts';
import type { NewTransaction } from './live-rows.ts';
import { packInputs } from './decision-inputs.ts';
import type { OrganizationScope } from './organization-scope.ts';

/** Rows per INSERT statement: large enough to amortise a round trip, small enough that PGlite's
 *  WebAssembly heap (which never shrinks) does not grow for the statement. */
export const CHUNK_ROWS = 2_500;

/** Inserts rows given as whole columns (UNNEST), each with its organization; an id the
 *  organization already has is skipped. A binary column is a start (1-based) and a length in $30,
 *  both null for a null value: both drivers send one byte buffer the same way, while an array of
 *  them they do not (postgres.js sends it as one bytea). */
export const INSERT_ROWS = `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, import_job_id,
                                   risk_score, risk_band, decision, mode, response, label, label_known_ms, outcome_source, outcome_reported_by, features,
                                   model_id, model_decision, rule_action, rule_ids, rule_errors, inputs, challengers, fields, field_keys)
  SELECT u.o, u.id, u.t, u.a, u.c, u.m, u.l, u.p, u.s, u.j, u.rs, u.rb, u.d, u.mo, substring($30::bytea FROM u.re FOR u.rel), u.lb, u.lk, u.os, u.ob,
         substring($30::bytea FROM u.f FOR u.fl), u.mi, u.md, u.ra, string_to_array(u.ri, ','), string_to_array(u.rx, ','), substring($30::bytea FROM u.ip FOR u.ipl), u.ch::jsonb, u.fd::jsonb,
         CASE WHEN u.fk IS NOT NULL THEN ARRAY(SELECT jsonb_array_elements_text(u.fk::jsonb)) END
  FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
              $11::float8[], $12::text[], $13::text[], $14::text[], $15::int4[], $16::int2[], $17::float8[], $18::text[], $19::text[], $20::int4[],
              $21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::int4[], $27::int4[], $28::int4[], $29::int4[], $31::text[], $32::text[], $33::text[])
       AS u(o, id, t, a, c, m, l, p, s, j, rs, rb, d, mo, re, lb, lk, os, ob, f, mi, md, ra, ri, rx, ip, rel, fl, ipl, ch, fd, fk)
  ON CONFLICT (organization_id, transaction_id) DO NOTHING
  RETURNING organization_id, transaction_id, seq, xid::text`;

/** INSERT_ROWS's parameters for `chunk`, the organization of each row at the same place in `organizations`. */
export function insertParams(organizations: readonly string[], chunk: readonly NewTransaction[]): unknown[] {
  const blob = new BinaryColumns();
  const responses = blob.column(chunk.map((r) => (r.response ? deflateRawSync(r.response, { level: 1 }) : null)));
  const features = blob.column(chunk.map((r) => (r.features ? new Uint8Array(r.features.buffer, r.features.byteOffset, r.features.byteLength) : null)));
  const inputs = blob.column(chunk.map((r) => (r.decided ? packInputs(r.decided.inputs) : null)));
  return [
    organizations,
    chunk.map((r) => r.transaction_id),
    chunk.map((r) => r.time),
    chunk.map((r) => r.amount),
    chunk.map((r) => r.customer_id),
    chunk.map((r) => r.merchant_id),
    chunk.map((r) => r.location),
    chunk.map((r) => r.payment_type),
    chunk.map((r) => r.source),
    chunk.map((r) => r.import_job_id ?? null),
    chunk.map((r) => r.decision?.risk_score ?? null),
    chunk.map((r) => r.decision?.risk_band ?? null),
    chunk.map((r) => r.decision?.decision ?? null),
    chunk.map((r) => r.decision?.mode ?? null),
    responses.starts,
    chunk.map((r) => r.label ?? null),
    chunk.map((r) => (r.label === 0 || r.label === 1 ? r.label_known_ms! : null)),
    chunk.map((r) => r.outcome_source ?? null),
    chunk.map((r) => r.outcome_reported_by ?? null),
    features.starts,
    chunk.map((r) => r.decided?.model_id ?? null),
    chunk.map((r) => r.decided?.model_decision ?? null),
    chunk.map((r) => r.decided?.rule_action ?? null),
    // Rule ids are the service's own (no comma): joined, and split again by the statement.
    chunk.map((r) => (r.decided?.rule_ids.length ? r.decided.rule_ids.join(',') : null)),
    chunk.map((r) => (r.decided?.rule_errors.length ? r.decided.rule_errors.join(',') : null)),
    inputs.starts,
    responses.lengths,
    features.lengths,
    inputs.lengths,
    blob.bytes(),
    chunk.map((r) => (r.decided?.challengers?.length ? JSON.stringify(r.decided.challengers) : null)),
    chunk.map((r) => (r.fields ? JSON.stringify(r.fields) : null)),
    // Key values are any text: a JSON array each, which the statement unpacks.
    chunk.map((r) => (r.field_keys?.length ? JSON.stringify(r.field_keys) : null)),
  ];
}

/** The binary columns of a chunk laid end to end in one buffer, each value found by its start
 *  (1-based, as `substring` counts) and its length. */
class BinaryColumns {
  readonly #parts: Uint8Array[] = [];
  #size = 0;

  column(values: ReadonlyArray<Uint8Array | null>): { starts: Array<number | null>; lengths: Array<number | null> } {
    const starts: Array<number | null> = [];
    const lengths: Array<number | null> = [];
    for (const value of values) {
      if (value === null) {
        starts.push(null);
        lengths.push(null);
        continue;
      }
      starts.push(this.#size + 1);
      lengths.push(value.byteLength);
      this.#parts.push(value);
      this.#size += value.byteLength;
    }
    return { starts, lengths };
  }

  bytes(): Buffer {
    return Buffer.concat(this.#parts, this.#size);
  }
}

/** Refuses rows whose time or amount is not a finite number, before anything is written. */
export function checkFinite(rows: readonly NewTransaction[]): void {
  for (const r of rows) {
    if (!Number.isFinite(r.time) || !Number.isFinite(r.amount)) {
      throw new StorageError('query_failed', `transaction ${r.transaction_id} has a time or amount that is not a finite number`);
    }
  }
}

/** Stores transactions of the scope's organization in one database transaction (`into`, when
 *  given: the caller's), in the live feed's order; a transaction id the organization already has
 *  is left as it is. Returns the ids that were stored, each with its feed position. */
export async function insertTransactions(scope: OrganizationScope, rows: readonly NewTransaction[], into?: Queryable): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  if (rows.length === 0) return stored;
  checkFinite(rows);
  const write = async (tx: Queryable) => {
    await tx.query(`SELECT ${notifyFeed(1)}`, [FEED_SENDER]);
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const chunk = rows.slice(start, start + CHUNK_ROWS);
      for (const row of await tx.query<{ transaction_id: string; seq: number }>(
        INSERT_ROWS,
        insertParams(
          chunk.map(() => scope.organizationId),
          chunk,
        ),
      ))
        stored.set(row.transaction_id, row.seq);
    }
  };
  if (into) await write(into);
  else await scope.db.transaction(write);
  return stored;
}
