// Files attached to a case (migrations/026_inboxes_attachments.sql), bound to the organization by
// its scope (organization-data.ts). The bytes live in the database, under the attachment's random
// id: several processes share the database and never a disk, and the embedded back end keeps its
// database in the data directory anyway. The name the file was sent with is display text only.
// Attaching is a change of the case (changeCase: under its row lock, refused once it is closed)
// whose timeline entry carries the name, the size and the SHA-256.

import { randomBytes } from 'node:crypto';
import type { OrganizationScope } from './organization-scope.ts';
import { changeCase } from './cases-store.ts';

export interface AttachmentRow {
  id: string;
  case_id: string;
  name: string;
  size: number;
  sha256: string;
  created_at_ms: number;
  created_by: string;
}

/** A file to attach, its name checked and its hash taken. */
export interface NewAttachment {
  name: string;
  sha256: string;
  content: Buffer;
}

/** Attaches a file to a case at `at` by `by`: undefined when there is no such case, `closed` when
 *  it is closed (nothing stored). */
export async function addAttachment(
  scope: OrganizationScope,
  caseId: string,
  file: NewAttachment,
  at: number,
  by: string,
): Promise<AttachmentRow | 'closed' | undefined> {
  const id = `att_${randomBytes(16).toString('base64url')}`;
  const changed = await changeCase<'closed' | AttachmentRow>(scope, caseId, at, by, async (c, tx) => {
    if (c.status === 'closed') return { refuse: 'closed' };
    const [row] = await tx.query<AttachmentRow>(
      `INSERT INTO case_attachments (id, case_id, organization_id, name, size, sha256, content, created_at_ms, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7::bytea, $8, $9) RETURNING id, case_id, name, size, sha256, created_at_ms, created_by`,
      [id, caseId, scope.organizationId, file.name, file.content.length, file.sha256, file.content, at, by],
    );
    return {
      set: {},
      entry: { kind: 'attachment', detail: { attachment_id: id, name: file.name, size: file.content.length, sha256: file.sha256 } },
      result: row!,
    };
  });
  if (!changed) return undefined;
  if ('refused' in changed) return 'closed';
  return changed.result as AttachmentRow;
}

/** One attachment of one of the organization's cases, with its bytes; undefined when there is none. */
export async function getAttachment(scope: OrganizationScope, caseId: string, id: string): Promise<(AttachmentRow & { content: Buffer }) | undefined> {
  const [row] = await scope.db.query<AttachmentRow & { content: Uint8Array }>(
    `SELECT id, case_id, name, size, sha256, content, created_at_ms, created_by FROM case_attachments WHERE organization_id = $1 AND case_id = $2 AND id = $3`,
    [scope.organizationId, caseId, id],
  );
  return row && { ...row, content: Buffer.from(row.content.buffer, row.content.byteOffset, row.content.byteLength) };
}

/** A case's attachments (without their bytes), oldest first. */
export function listAttachments(scope: OrganizationScope, caseId: string): Promise<AttachmentRow[]> {
  return scope.db.query<AttachmentRow>(
    'SELECT id, case_id, name, size, sha256, created_at_ms, created_by FROM case_attachments WHERE organization_id = $1 AND case_id = $2 ORDER BY created_at_ms, id',
    [scope.organizationId, caseId],
  );
}
