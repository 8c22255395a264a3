// A file attached to a case as the service answers it (the upload's answer): its id (what it is
// stored and downloaded under), the name it was sent with (display text only), its size and its
// SHA-256, who attached it and when.

import { z } from 'zod';

export { MAX_ATTACHMENT_BYTES } from '../domain/cases.ts';

export const Attachment = z.object({
  id: z.string(),
  case_id: z.string(),
  name: z.string().describe('The file name it was sent with: display text, never a path'),
  size: z.number().int(),
  sha256: z.string().describe('SHA-256 of its bytes, hex'),
  created_at: z.string(),
  created_by: z.string(),
});
export type Attachment = z.infer<typeof Attachment>;
