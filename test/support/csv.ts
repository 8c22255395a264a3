// Reads CSV text as a user's tools would, with a real CSV parser (csv-parser, the one the service
// reads uploads with): its header as the parser found it, and every row by column name.

import csv from 'csv-parser';
import { Readable } from 'node:stream';

export async function readCsv(text: string): Promise<{ header: string[]; rows: Record<string, string>[] }> {
  let header: string[] = [];
  const rows: Record<string, string>[] = [];
  const parser = Readable.from([text])
    .pipe(csv())
    .on('headers', (h: string[]) => (header = h));
  for await (const row of parser) rows.push(row as Record<string, string>);
  return { header, rows };
}
