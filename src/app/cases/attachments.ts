// Files on a case: a member attaches one (at most 5 MB) to a case not closed; any member downloads
// it. The file is stored under a random id in the database (storage/case-attachments.ts), never
// under its name, and is only ever sent back as a download of opaque bytes (the route's headers):
// nothing here reads, renders or runs it. The name it was sent with is kept as display text, after
// refusing one that looks like a path (a separator, `..`) or carries control characters. The
// timeline tells the name, the size and the SHA-256.

import { createHash } from 'node:crypto';
import { type Attachment, MAX_ATTACHMENT_BYTES } from '../../contract/case-attachments.ts';
import type { AttachmentRow } from '../../storage/case-attachments.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { AppError } from '../errors.ts';
import type { CaseActionDeps } from './cases.ts';
import { invalid } from './cases.ts';

const view = (a: AttachmentRow): Attachment => ({
  id: a.id,
  case_id: a.case_id,
  name: a.name,
  size: a.size,
  sha256: a.sha256,
  created_at: new Date(a.created_at_ms).toISOString(),
  created_by: a.created_by,
});

/** `payload_too_large` for a file over the limit. */
export const attachmentTooLarge = () =>
  new AppError(
    'payload_too_large',
    `The file is larger than ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MB.`,
    'Attach a file of at most 5 MB (compress or split it).',
  );

/** Why a file name cannot be kept as it was sent, or undefined when it can. */
export function badFileName(name: string): string | undefined {
  if (name.length === 0) return 'the file has no name';
  if (name.length > 255) return 'the name is longer than 255 characters';
  if (/[/\\]/.test(name)) return 'the name contains a path separator';
  if (name.includes('..')) return 'the name contains ..';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'the name contains a control character';
  return undefined;
}

/** Attaches a file to a case not closed (members). */
export async function attachFile(
  deps: CaseActionDeps,
  caller: OrganizationCaller,
  caseId: string,
  file: { name: string; content: Buffer },
): Promise<Attachment> {
  requireCapability(caller.role, 'workCases');
  if (file.content.length > MAX_ATTACHMENT_BYTES) throw attachmentTooLarge();
  const problem = badFileName(file.name);
  if (problem) throw invalid('file.filename', problem, 'Send the file under a plain name, such as statement.pdf: no folders, no "..", no control characters.');
  const data = organizationData(deps.db, caller.organizationId);
  const sha256 = createHash('sha256').update(file.content).digest('hex');
  const added = await data.attachments.add(caseId, { name: file.name, sha256, content: file.content }, (deps.clock ?? Date.now)(), caller.by);
  if (!added) throw new AppError('not_found', `No case ${caseId} in this organization.`, "Check the case's id (GET the organization's cases).");
  if (added === 'closed')
    throw new AppError('case_closed', `Case ${caseId} is closed: it takes no more files.`, 'Reopen it first: POST …/status with {"status": "open"}.');
  return view(added);
}

/** One attachment with its bytes (members). */
export async function downloadAttachment(
  deps: CaseActionDeps,
  caller: OrganizationCaller,
  caseId: string,
  id: string,
): Promise<{ attachment: Attachment; content: Buffer }> {
  const found = await organizationData(deps.db, caller.organizationId).attachments.one(caseId, id);
  if (!found)
    throw new AppError(
      'not_found',
      `No attachment ${id} on case ${caseId} in this organization.`,
      "Check the ids (the case's timeline lists its attachments).",
    );
  return { attachment: view(found), content: found.content };
}
