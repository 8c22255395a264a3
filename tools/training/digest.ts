// The content digest the offline tools name things by: a model's data and code fingerprints
// (train.ts) and the model text a golden file was written for (golden.ts).

import { createHash } from 'node:crypto';

/** SHA-256 of a text, hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
