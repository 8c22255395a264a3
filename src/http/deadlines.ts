// Each request's deadline for the database (app/request-deadline.ts), started before anything else
// runs for it and finished once it has been answered, so work it left running is not cut. A route
// says what kind of request it is in its config (`...deadline('score')`); by default, any other;
// `deadline('none')` for a route that never uses the database.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestDeadline, type DeadlineSettings, type RequestKind } from '../app/request-deadline.ts';

/** A route config's part that names its kind of deadline. */
export const deadline = (kind: Exclude<RequestKind, 'other'>): { deadline: RequestKind } => ({ deadline: kind });

export function installDeadlines(app: FastifyInstance, config: DeadlineSettings): void {
  const running = new WeakMap<FastifyRequest, { finish(): void }>();
  // Callback hooks: they run on every request, scoring included.
  app.addHook('onRequest', (request, _reply, done) => {
    const d = requestDeadline((request.routeOptions.config as { deadline?: RequestKind } | undefined)?.deadline ?? 'other', config);
    if (!d) return done();
    running.set(request, d);
    d.run(done);
  });
  app.addHook('onResponse', (request, _reply, done) => {
    running.get(request)?.finish();
    done();
  });
}
