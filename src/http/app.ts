// The Fastify application: zod validation and serialisation (fastify-type-provider-zod), the
// OpenAPI reference generated from the same schemas (/api/docs, JSON at /api/docs/json), the
// service's error body everywhere (errors.ts), rate limiting on the routes that declare it,
// and the routes. `buildApp` takes the application's door (app/app.ts): the routes see its
// capabilities and nothing else, and tests run the real app through `inject`.

import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { App, KeySurface } from '../app/app.ts';
import { ApiError, clientError, documentFrameworkStatuses, frameworkError, installErrorHandling, MAX_PATH_PARAMETER, RouteRegistry } from './errors.ts';
import { ErrorResponse } from '../contract/errors.ts';
import { installAccessLog } from './access-log.ts';
import { operationIdOf } from './operation-ids.ts';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.ts';
import { publicRoutes } from './routes/public.ts';
import { scoreRoutes } from './routes/score.ts';
import { datasetRoutes } from './routes/datasets.ts';
import { jobRoutes } from './routes/jobs.ts';
import { authRoutes } from './routes/auth.ts';
import { organizationRoutes } from './routes/organizations.ts';
import { memberRoutes } from './routes/members.ts';
import { dataProtectionRoutes, keyErasureRoutes } from './routes/data-protection.ts';
import { v1Routes } from './routes/v1.ts';
import { keyTransactionRoutes, memberTransactionRoutes } from './routes/transactions.ts';
import { keyListRoutes, memberRuleRoutes } from './routes/rules.ts';
import { fieldRoutes } from './routes/fields.ts';
import { caseRoutes } from './routes/cases.ts';
import { keyCaseRoutes } from './routes/v1-cases.ts';
import { caseAttachmentRoutes } from './routes/case-attachments.ts';
import { keyAuthentication } from './guards.ts';
import { historyImportRoutes } from './routes/history-imports.ts';
import { trainingRoutes } from './routes/training.ts';
import { modelRoutes } from './routes/models.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { webRoutes } from './routes/web.ts';
import { installCaller } from './caller.ts';
import { stdoutLog } from './log-stream.ts';
import { installDeadlines } from './deadlines.ts';
import { requestArrived, requestEnded } from '../app/request-work.ts';

export interface AppOptions {
  /** Pino logger options, or false for none (tests). */
  logger?: boolean | Record<string, unknown>;
}

/** Headers must arrive within this long (or the request timeout, if shorter). */
const HEADERS_TIMEOUT_MS = 30_000;
/** An idle keep-alive connection is closed after this long. */
const KEEP_ALIVE_MS = 72_000;
/** How often Node looks for requests past their timeouts. */
const CHECK_INTERVAL_MS = 1_000;

/** The headers every answer carries (Request-Id), and on a rate-limited route the window's, added
 *  to each documented response so that generated clients and readers of the reference see them. */
function withDocumentedHeaders(
  response: Record<string, Record<string, unknown>> | undefined,
  rateLimited: boolean,
): Record<string, Record<string, unknown>> | undefined {
  if (!response) return response;
  const headers: Record<string, unknown> = {
    'request-id': {
      type: 'string',
      description:
        "The request's id: the caller's X-Request-Id when it is 1–128 visible ASCII characters, otherwise generated (req_…); also detail.request_id in an error",
    },
    ...(rateLimited
      ? {
          'x-ratelimit-limit': { type: 'integer', description: 'Requests allowed in the current one-minute window' },
          'x-ratelimit-remaining': { type: 'integer', description: 'Requests left in it' },
          'x-ratelimit-reset': { type: 'integer', description: 'Seconds until it starts again' },
        }
      : {}),
  };
  return Object.fromEntries(Object.entries(response).map(([status, r]) => [status, { ...r, headers: { ...headers, ...(r.headers as object | undefined) } }]));
}

export async function buildApp(door: App, o: AppOptions = {}): Promise<FastifyInstance> {
  const config = door.config;
  const app = Fastify({
    // Standard output through a stream that never blocks the server and never waits at exit
    // (log-stream.ts): a log reader that stops must not stop the service.
    logger:
      o.logger === undefined
        ? { level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-csrf-token"]'], stream: stdoutLog() }
        : o.logger,
    // The request log is access-log.ts's: a line for each refused or failed request, a summary of
    // the others every few seconds, not two lines for every request. (Through a log controller:
    // the top-level `disableRequestLogging` option is deprecated, FSTDEP023, warned at every start.)
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.MAX_JSON_BODY_BYTES,
    // Bounded requests: a request's headers and body must arrive within REQUEST_TIMEOUT_SECONDS
    // (headers alone within HEADERS_TIMEOUT_MS), or it is answered 408 and its connection closed
    // (clientError), so clients that send slowly or stop part way cannot hold connections and
    // buffers for ever. Node checks every CHECK_INTERVAL_MS (its default, 30 s, would let a request
    // run that much past its limit). Idle keep-alive connections close after KEEP_ALIVE_MS, longer
    // than the 60 s idle timeout of common load balancers, so that it is they that close first.
    requestTimeout: config.REQUEST_TIMEOUT_SECONDS * 1000,
    keepAliveTimeout: KEEP_ALIVE_MS,
    http: { headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_SECONDS * 1000), connectionsCheckingInterval: CHECK_INTERVAL_MS },
    clientErrorHandler: clientError,
    trustProxy: false,
    // Request ids let an operator find a 500's details in the log: the caller's X-Request-Id when
    // well formed, otherwise a generated one (request-id.ts); answered in Request-Id (below).
    requestIdHeader: false,
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER },
    frameworkErrors: frameworkError,
    // While the server drains, a request still arriving on an open connection is answered 503
    // `shutting_down` in the service's error shape (below), not with Fastify's own body.
    return503OnClosing: false,
  });
  if (o.logger !== false) installAccessLog(app);
  installDeadlines(app, config);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // A callback hook, not an async one: it runs on every request, scoring included. Every response
  // carries the request's id (an error's answer sets it again: errors.ts, `answer`, for the errors
  // answered before this hook runs).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    // At work until its answer ends or its connection closes ('close' comes once, either way): a
    // large history's load holds its reads back meanwhile (app/request-work.ts).
    requestArrived();
    reply.raw.on('close', requestEnded);
    if (!closing) return done();
    done(
      new ApiError(
        'shutting_down',
        'This server is shutting down.',
        'Send the request again: another server, or this one once restarted, will answer it.',
        {},
        { connection: 'close' },
      ),
    );
  });
  const routes = new RouteRegistry();
  app.addHook('onRoute', (route) => {
    routes.add(route.url, route.method);
    documentFrameworkStatuses(route as Parameters<typeof documentFrameworkStatuses>[0], ErrorResponse);
  });
  // JSON bodies only (the upload reads its CSV and form in a context of its own: datasets.ts).
  // Fastify also parses text/plain by default, which a JSON route would then refuse as 422 with
  // `body` wrong; without it such a body is what it is, another media type: 415.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app, routes);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      // BACKEND_URL: the API's public origin in production, so the reference's "try it" calls go there.
      // Without it, `/`: a relative server is resolved against where the document was read from
      // (OpenAPI 3.1, Server Object), so "try it", schemathesis and generated clients reach this
      // service at whatever origin a client sees (a proxy's, a tunnel's). The listening origin would
      // be the bind address (0.0.0.0, a container's), which is rarely the one a client can reach.
      servers: [
        config.BACKEND_URL
          ? { url: config.BACKEND_URL.replace(/\/+$/, ''), description: 'this service' }
          : { url: '/', description: 'this service (the origin this document was read from)' },
      ],
      info: {
        title: 'Fraud-risk scoring service',
        version: '0.1.0',
        description:
          'Scores payment transactions for fraud with a calibrated probability, a decision and exact reasons. Errors: `{"detail": {"message", "reason", "fix", "request_id"}}`. Every response carries `Request-Id`: your `X-Request-Id` when it is 1–128 visible ASCII characters, otherwise a generated one; quote it when reporting a problem.',
      },
      tags: [
        { name: 'scoring', description: 'Score transactions' },
        { name: 'models', description: 'Models and their settings' },
        { name: 'evaluation', description: 'Published, split-labelled results' },
        { name: 'datasets', description: 'Dataset format and example' },
        { name: 'decisions', description: "An organization's decision log: recorded transactions, their decisions and outcomes" },
        { name: 'rules', description: "An organization's rules (CEL expressions that allow, block or review) and lists (docs/rules.md)" },
        {
          name: 'fields',
          description: 'An organization\'s own fields on a payment: declared with a type, read by rules (docs/integrating.md, "Custom fields")',
        },
        { name: 'cases', description: 'An organization\'s inboxes and the cases its decisions open in them (docs/analysts.md, "Cases")' },
        { name: 'webhooks', description: "An organization's webhook endpoints and their deliveries (docs/integrating.md, Webhooks)" },
        {
          name: 'data protection',
          description: 'Retention, a customer\'s data exported or erased, and the audit of both (docs/operating.md, "Data protection")',
        },
        { name: 'training', description: 'Training limits' },
        { name: 'service', description: 'Health and configuration' },
        { name: 'accounts', description: 'Sign-in, organizations and API keys (docs/operating.md, Sign-in and accounts; docs/integrating.md, API keys)' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key of your organization (sk_test_… or sk_live_…)' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'service_session',
            description: 'Set by POST /api/auth/session; unsafe methods also need X-CSRF-Token',
          },
        },
      },
    },
    // A route that streams rather than validates declares it for the reference only: what it reads
    // in `config.documentedBody` (the upload), what it sends in `config.documentedResponses` (the
    // CSV download), beside the schemas that validate its other answers. Every operation gets its
    // operationId (operation-ids.ts) unless its schema names one.
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      const config = input.route.config as { documentedBody?: unknown; documentedResponses?: Record<string, unknown> } | undefined;
      const method = ([input.route.method].flat().find((m) => m !== 'HEAD') ?? 'GET') as string;
      let schema = out.schema as Record<string, unknown>;
      schema = { ...schema, operationId: schema.operationId ?? operationIdOf(method, input.url) };
      if (config?.documentedBody) schema = { ...schema, body: config.documentedBody };
      if (config?.documentedResponses) schema = { ...schema, response: { ...(schema.response as object | undefined), ...config.documentedResponses } };
      schema = {
        ...schema,
        response: withDocumentedHeaders(
          schema.response as Record<string, Record<string, unknown>> | undefined,
          Boolean((input.route.config as { rateLimit?: unknown } | undefined)?.rateLimit),
        ),
      };
      return { ...out, schema } as typeof out;
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
  await app.register(rateLimit, {
    global: false,
    // Fixed window in memory, per client IP (README, Configuration): resets on restart, not shared.
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new ApiError(
        'rate_limited',
        `Too many requests: at most ${context.max} per minute.`,
        `Wait ${seconds} s (Retry-After) before sending more.`,
        { retry_after_seconds: seconds },
        { 'retry-after': String(seconds) },
      );
    },
  });

  await app.register(cookie);
  // Cross-origin callers only where configured (CORS_ORIGINS, FRONTEND_URL): the dashboard on its
  // own origin sends cookies, so credentials are allowed for exactly those origins.
  const origins = [...(config.CORS_ORIGINS ?? '').split(','), config.FRONTEND_URL ?? ''].map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
  if (origins.length > 0) {
    await app.register(cors, {
      origin: origins,
      credentials: true,
      allowedHeaders: ['content-type', 'authorization', 'x-csrf-token', 'x-request-id'],
      exposedHeaders: [REQUEST_ID_HEADER],
      methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      maxAge: 600,
    });
  }

  // Two surfaces, each an encapsulated plugin with its own way of knowing the caller, so a route
  // is on a surface by where it is registered, never by matching its URL.
  // The dashboard surface (`/api/...`): public reads, sandbox scoring and the signed-in pages;
  // the caller is a session (cookie, CSRF on unsafe methods) or a guest.
  await app.register(async (dashboard) => {
    installCaller(dashboard, door.sessions, ErrorResponse);
    publicRoutes(dashboard, door);
    scoreRoutes(dashboard, door);
    datasetRoutes(dashboard, door);
    jobRoutes(dashboard, door);
    authRoutes(dashboard, door);
    organizationRoutes(dashboard, door);
    memberRoutes(dashboard, door);
    memberTransactionRoutes(dashboard, door);
    memberRuleRoutes(dashboard, door);
    fieldRoutes(dashboard, door);
    caseRoutes(dashboard, door);
    caseAttachmentRoutes(dashboard, door);
    historyImportRoutes(dashboard, door);
    trainingRoutes(dashboard, door);
    modelRoutes(dashboard, door);
    webhookRoutes(dashboard, door);
    dataProtectionRoutes(dashboard, door);
  });
  // The customer surface (`/api/v1/...`): one API-key check for every route.
  await app.register(async (v1) => {
    const surface: KeySurface = door;
    v1.addHook('onRequest', keyAuthentication(surface.keys));
    v1Routes(v1, surface);
    keyTransactionRoutes(v1, surface);
    keyListRoutes(v1, surface);
    keyCaseRoutes(v1, surface);
    keyErasureRoutes(v1, surface);
  });
  await webRoutes(app);
  return app;
}
