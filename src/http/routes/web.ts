// The dashboard (web/, built by `npm run build:web` during `npm ci`) served by the service itself at
// `/` (and `/login`, the sign-in return address): hashed assets with a year-long immutable cache,
// the page itself never cached, and a Content-Security-Policy that allows only this origin's
// scripts, styles and API. Without a build, `/` says how to make one.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import { ApiError } from '../errors.ts';

export const WEB_DIST = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

export async function webRoutes(app: FastifyInstance): Promise<void> {
  const built = existsSync(`${WEB_DIST}index.html`);
  const page = async (_request: unknown, reply: FastifyReply) => {
    if (!built)
      throw new ApiError(
        'not_found',
        'The dashboard is not built on this server.',
        'Run `npm run build:web` (npm ci does it), then restart; the API works without it.',
      );
    reply
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
    return reply.sendFile('index.html', { cacheControl: false });
  };
  if (built) {
    // Only the files that exist at start are routes (wildcard: false): nothing else on disk is reachable.
    await app.register(fastifyStatic, { root: WEB_DIST, prefix: '/', wildcard: false, index: false, maxAge: '365d', immutable: true, dotfiles: 'deny' });
  }
  app.get('/', { schema: { hide: true } }, page);
  app.get('/login', { schema: { hide: true } }, page);
}
