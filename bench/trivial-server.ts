// The ceiling for bench:http: a bare Fastify server with one JSON route and nothing else (no
// validation, no logging, no plugins), in its own process like the real server. Prints its port.
// With CANNED_FILE, a second route answers that file's text (a real score response) as it is:
// what sending a response of that size costs with no work at all.

import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/trivial', async () => ({ ok: true, risk_score: 0.5 }));
const canned = process.env.CANNED_FILE ? readFileSync(process.env.CANNED_FILE, 'utf8') : undefined;
if (canned !== undefined) app.post('/canned', async (_request, reply) => reply.type('application/json; charset=utf-8').send(canned));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`port ${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
