// The customer surface: `/api/v1/...` with `Authorization: Bearer <API key>`. Scoring reads and
// records the key's organization's history (src/live/tenants.ts): features, entity history,
// evidence and rings are that organization's only, and the transaction joins its history with the
// decision that was answered (the decision log; by default the response waits for its commit). A
// `transaction_id` is unique within the organization: the same id with the same amount, customer
// and merchant is a retry, answered with the stored response and `Idempotent-Replayed: true`,
// nothing recorded twice; with other values it is 409 `duplicate_transaction`. Across processes
// the database's unique constraint decides, and the process that lost answers with the winner's
// stored response. The key is authenticated by src/app/accounts.ts (a rotation or revocation takes
// effect at once in this process, within a second in another), its use is counted, and the rate
// limit is per key. A missing, malformed, unknown, rotated-out or revoked key is 401
// `invalid_api_key`; the key never appears in a log line or an error.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { LiveApiKey } from '../../storage/accounts-store.ts';
import type { Service } from '../../app/service.ts';
import type { HistoryTransaction } from '../../domain/transaction.ts';
import type { NewTransaction } from '../../storage/live-store.ts';
import { requireAccounts } from '../caller.ts';
import { ApiError } from '../errors.ts';
import { ErrorResponse, ScoreRequest, ScoreResponse } from '../schemas.ts';
import { requireScorer } from './score.ts';
import { scoredEntities } from '../../scoring/scorer.ts';
import { sameTransaction } from '../../live/tenants.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key a `/api/v1` request authenticated with. */
    apiKey?: LiveApiKey;
  }
}

function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

/**
 * An onRequest hook: the request's API key, or 401 `invalid_api_key`. A request without any key is
 * refused 401 whatever the configuration (missing credentials are the caller's to fix); one with a
 * key, on a server without sign-in (keys cannot be checked), 503 `auth_not_configured`.
 */
export function keyAuthentication(service: Service) {
  return async (request: FastifyRequest): Promise<void> => {
    const secret = bearer(request);
    if (!secret) throw new ApiError(401, 'invalid_api_key', 'This endpoint needs an API key.', 'Send the header Authorization: Bearer <API key>; an organization owner creates keys with POST /api/organizations/{id}/api-keys.');
    const key = await requireAccounts(service).authenticateKey(secret);
    if (!key) throw new ApiError(401, 'invalid_api_key', 'The API key is not valid: unknown, rotated out or revoked.', 'Use a current key of your organization, or ask an owner to create one.');
    request.apiKey = key;
  };
}

/** The rate limit of the key surface: SCORE_RATE_PER_MINUTE per key, counted after authentication. */
function keyRateLimit(service: Service) {
  return {
    max: service.config.SCORE_RATE_PER_MINUTE,
    timeWindow: 60_000,
    hook: 'preHandler' as const,
    keyGenerator: (request: FastifyRequest) => `key:${request.apiKey?.id ?? request.ip}`,
  };
}

/** Bodies are sent as the JSON text that was stored: Fastify sends a string with a JSON content type
 *  as it is, so a replay is byte for byte the first answer. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** The stored answer to a retry (`Idempotent-Replayed: true`), or 409 for an imported id, which
 *  has no decision to return. */
function replay(reply: FastifyReply, body: string | undefined, id: string): FastifyReply {
  if (body === undefined) throw duplicate(id, 'by a history import, so there is no decision to return');
  return reply.header('idempotent-replayed', 'true').type(JSON_TYPE).send(body as never);
}

function duplicate(id: string, why: string): ApiError {
  return new ApiError(409, 'duplicate_transaction', `Transaction ${id} is already recorded ${why}.`, 'Send a retry with exactly the same amount, customer_id and merchant_id to get the stored decision back, or use a new transaction_id for a new transaction.');
}

export function v1Routes(app: FastifyInstance, service: Service): void {
  app.withTypeProvider<ZodTypeProvider>().post('/api/v1/risk/score', {
    config: { rateLimit: keyRateLimit(service) },
    onRequest: keyAuthentication(service),
    schema: {
      tags: ['scoring'],
      summary: "Score one transaction against the organization's history, and record it",
      description:
        "Same body and response as POST /api/risk/score, but read from the key's organization's own history, into which the transaction is recorded with its decision (GET /api/v1/transactions/{transaction_id}). transaction_id is unique within the organization: a retry with the same amount, customer_id and merchant_id gets the stored response again with the header Idempotent-Replayed: true; other values are 409 duplicate_transaction. Authorization: Bearer <API key> (sk_test_… or sk_live_…). The use is recorded against the key; rate limited per key.",
      security: [{ apiKey: [] }],
      body: ScoreRequest,
      response: { 200: ScoreResponse, 401: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request, reply) => {
    const key = request.apiKey!;
    const input = request.body;
    // The organization's active custom model, if it has one; else the built-in model.
    const custom = key.active_model_id ? await service.scorerForModel(key.active_model_id) : undefined;
    const scorer = requireScorer(service, custom?.scorer ?? service.scorer);
    const organizationId = key.organization_id;
    const tenant = await service.tenants.get(organizationId);
    service.accounts!.recordUse(key.id);
    // Evidence older than what the tenant holds (its last 31 days), read now: nothing below awaits.
    const earlier = await tenant.earlier(scoredEntities(input));
    const log = service.decisionLog;
    const id = input.transaction_id;
    if (id !== undefined) {
      // A copy of this id being committed by this process: its outcome decides what this one is.
      for (let first = log.inFlight(organizationId, id); first; first = log.inFlight(organizationId, id)) await first.catch(() => {});
      if (tenant.has(id)) {
        if (!tenant.sameAs(id, input)) throw duplicate(id, 'with a different amount, customer_id or merchant_id');
        return replay(reply, log.pendingResponse(organizationId, id) ?? (await tenant.data.response(id)), id);
      }
    }
    // From the checks above to queueing the row, nothing awaits: a concurrent copy of this id in
    // this process sees it.
    let recorded: (HistoryTransaction & { transaction_id: string }) | undefined;
    let features: Float32Array | undefined;
    const writeBehind = log.durability === 'write_behind';
    const result = scorer.score(input, {
      ...tenant.context,
      earlier,
      record: (tx, scoredWith) => {
        // Write-behind: this process's history has it at once. Commit: every process's history
        // gets it from the live feed once it is committed, this one's before the response is sent.
        if (writeBehind) tenant.add(tx);
        recorded = tx;
        features = scoredWith;
      },
    });
    if (custom?.note) result.notes.push(custom.note);
    const body = JSON.stringify(result);
    const tx = recorded!;
    const row: NewTransaction = {
      transaction_id: tx.transaction_id,
      time: tx.time,
      amount: tx.amount,
      customer_id: tx.customer_id,
      merchant_id: tx.merchant_id,
      location: tx.location,
      payment_type: tx.payment_type,
      source: 'scored',
      decision: result,
      response: body,
      features,
    };
    if (writeBehind) log.push(organizationId, row);
    else if (!(await log.commit(organizationId, row))) {
      // Another process recorded this id first: answer as a retry of the one it stored.
      const stored = await tenant.data.get(tx.transaction_id);
      if (!stored || !sameTransaction(stored, tx)) {
        throw duplicate(tx.transaction_id, 'with a different amount, customer_id or merchant_id');
      }
      return replay(reply, stored.response ?? undefined, tx.transaction_id);
    }
    return reply.type(JSON_TYPE).send(body as never);
  });
}
