// The dashboard's only way to the service: the documented `/api/...` endpoints, same origin, with
// the session cookie sent by the browser and, on unsafe methods, the CSRF header read from the
// `service_csrf` cookie. Errors come back as `ApiError` with the service's reason, message and fix,
// which pages show as they are.

import type { Job, JobSummaries } from './contract.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly fix: string,
    /** The whole `detail` of the error body (e.g. `validation` and `dataset_id` of a 422 upload). */
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

function csrfToken(): string | undefined {
  return document.cookie
    .split(';')
    .map((c) => c.trim().split('='))
    .find(([name]) => name === 'service_csrf')?.[1];
}

/** `T` is the response type of the route called (contract.ts); without it the answer is `unknown`.
 *  `file` is sent as a CSV body; `form` as a multipart form (the browser sets its boundary). */
export async function api<T = unknown>(path: string, init: RequestOptions = {}): Promise<T> {
  return (await apiAnswer<T>(path, init)).body;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  file?: Blob;
  form?: FormData;
}

/** `api`, with the answer's status too, for a route whose success has two (201 made, 200 joined). */
export async function apiAnswer<T = unknown>(path: string, init: RequestOptions = {}): Promise<{ status: number; body: T }> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.file) headers['content-type'] = 'text/csv';
  const csrf = csrfToken();
  if (method !== 'GET' && csrf) headers['x-csrf-token'] = decodeURIComponent(csrf);
  let res: Response;
  try {
    const body = init.form ?? init.file ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined);
    res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body } : {}) });
  } catch {
    throw new ApiError(0, 'network', 'The service could not be reached.', 'Check that the server is running, then try again.');
  }
  const text = await res.text();
  const body = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const d = body?.detail ?? {};
    throw new ApiError(res.status, d.reason ?? 'error', d.message ?? `HTTP ${res.status}`, d.fix ?? '', d);
  }
  return { status: res.status, body: body as T };
}

/** A finished job's `summary`, which the job's schema leaves open (any object), as what a job of
 *  the kind `K` reports (contract.ts, JobSummaries); null before it has succeeded. */
export function jobSummary<K extends keyof JobSummaries>(job: Job): JobSummaries[K] | null {
  return job.summary as unknown as JobSummaries[K] | null;
}
