import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
/**
 * The one error type of the service. Throw it anywhere; `app.onError` turns it into the spec's envelope
 * (`http_status`, `timestamp`, `request_id`, `errors[]`). Messages are written for the client: they must
 * never carry SQL, stack traces or secrets.
 */
export interface ErrorDetail {
  context: string
  message: string
}

export class ApiError extends Error {
  readonly status: number
  readonly details: ErrorDetail[]
  readonly headers: Record<string, string>

  constructor(status: number, message: string, context = '', headers: Record<string, string> = {}) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.details = [{ context, message }]
    this.headers = headers
  }

  /** An error with several details (for example every violation of a payload at once). */
  static many(status: number, details: ErrorDetail[], headers: Record<string, string> = {}): ApiError {
    if (details.length === 0) throw new Error('ApiError.many needs at least one detail')
    const err = new ApiError(status, details[0].message, details[0].context, headers)
    err.details.splice(0, 1, ...details)
    return err
  }
}

export const badRequest = (message: string, context = '') => new ApiError(400, message, context)
export const unauthorized = (message: string, context = 'auth') => new ApiError(401, message, context)
export const forbidden = (message = 'not authorized', context = 'auth') => new ApiError(403, message, context)
export const notFound = (message = 'resource not found', context = '') => new ApiError(404, message, context)
export const conflict = (message: string, context = '') => new ApiError(409, message, context)

/** RFC 3339 UTC with millisecond precision and `Z`: fixed width, so string order equals time order. */
export function rfc3339(d: Date | number): string {
  return new Date(d).toISOString()
}

export function envelope(status: number, details: ErrorDetail[], requestId: string, now: Date) {
  return {
    http_status: status,
    timestamp: rfc3339(now),
    request_id: requestId,
    errors: details.map((d) => ({ context: d.context, message: d.message })),
  }
}

/** Sends the JSON error envelope through the context, so headers set earlier (RequestID, RateLimit) stay. */
export function sendError(c: Context, status: number, details: ErrorDetail[], headers: Record<string, string> = {}): Response {
  const requestId: string = c.get('requestId') ?? crypto.randomUUID()
  const now: Date = c.get('now') ? c.get('now')() : new Date()
  c.header('Content-Type', 'application/json')
  for (const [k, v] of Object.entries(headers)) c.header(k, v)
  return c.body(JSON.stringify(envelope(status, details, requestId, now)), status as ContentfulStatusCode)
}
