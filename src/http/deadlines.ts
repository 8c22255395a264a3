// Each request's deadline for the database (storage/deadline.ts), set before anything else runs
// for it: scoring routes get SCORE_DEADLINE_SECONDS, uploads and exports TRANSFER_DEADLINE_SECONDS
// for each database operation (their bodies may take minutes to arrive), every other request
// DATABASE_DEADLINE_SECONDS. A route says which it is in its config (`...deadline('score')`).
// The deadline ends when the answer has been sent, so work the request left running is not cut.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { Deadline } from '../storage/deadline.ts';

export type DeadlineKind = 'score' | 'transfer';

/** A route config's part that names its deadline. */
export const deadline = (kind: DeadlineKind): { deadline: DeadlineKind } => ({ deadline: kind });

export function installDeadlines(app: FastifyInstance, config: Pick<Config, 'SCORE_DEADLINE_SECONDS' | 'TRANSFER_DEADLINE_SECONDS' | 'DATABASE_DEADLINE_SECONDS'>): void {
  const running = new WeakMap<FastifyRequest, Deadline>();
  // Callback hooks: they run on every request, scoring included.
  app.addHook('onRequest', (request, _reply, done) => {
    const kind = (request.routeOptions.config as { deadline?: DeadlineKind } | undefined)?.deadline;
    const d =
      kind === 'score'
        ? new Deadline(config.SCORE_DEADLINE_SECONDS)
        : kind === 'transfer'
          ? new Deadline(config.TRANSFER_DEADLINE_SECONDS, true)
          : new Deadline(config.DATABASE_DEADLINE_SECONDS);
    running.set(request, d);
    d.run(done);
  });
  app.addHook('onResponse', (request, _reply, done) => {
    running.get(request)?.finish();
    done();
  });
}
