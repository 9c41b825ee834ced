import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from './errors'

/**
 * Reads from D1 read replicas, with read-your-writes by bookmark (D1's Sessions API).
 *
 * Every request runs its D1 statements in one D1 session (`DB.withSession`), which is sequentially
 * consistent: a read in the session sees every write made earlier in it. Where the session starts:
 *  - the client sent `X-D1-Bookmark` (from an earlier response): at least as new as that bookmark, so a
 *    read after the client's own write sees the write (a token created then used, an ingest job's own
 *    reads, a finding poll after an analysis request);
 *  - otherwise a read-only request (GET, HEAD) may start on any replica ('first-unconstrained'): it may
 *    lag the primary by the replication delay;
 *  - otherwise (a write) on the primary ('first-primary').
 * Every response carries the session's latest bookmark in `X-D1-Bookmark` (none if the request ran no D1
 * statement). Without replication enabled (and locally) every session is served by the primary, so the
 * answers are the same; the code path is the same too (test/integration/d1-session.test.ts).
 *
 * Not through the session: the Durable Objects (limiter, analyzer) hold their own binding and always read
 * the primary, so revocation and budget decisions never see a lagging replica.
 */
export const BOOKMARK_HEADER = 'X-D1-Bookmark'

/** The binding a request's session was made from, to read the primary where a replica's lag would hurt. */
const primaries = new WeakMap<object, D1Database>()

/**
 * The primary-backed binding behind a request's `DB` (itself when no session was made). Used for the token
 * key lookup in authentication: a token created a moment ago must verify even when the client did not
 * send the bookmark of its creation (the key is cached per isolate afterwards, so this is rare).
 */
export function primaryDb(db: D1Database): D1Database {
  return primaries.get(db) ?? db
}
/** A bookmark is opaque; this only bounds what is passed on to D1 (D1's own are about 60 characters). */
const BOOKMARK = /^[0-9A-Za-z._:-]{1,256}$/

export function d1Session(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const db = c.env?.DB as D1Database | undefined
    // A test double without the Sessions API: run as before.
    if (!db || typeof db.withSession !== 'function') return next()
    const sent = c.req.header(BOOKMARK_HEADER)?.trim()
    if (sent && !BOOKMARK.test(sent)) {
      throw new ApiError(400, `malformed ${BOOKMARK_HEADER} header: send back the value of an earlier response's ${BOOKMARK_HEADER}`, 'header')
    }
    const readOnly = c.req.method === 'GET' || c.req.method === 'HEAD'
    let session: D1DatabaseSession
    try {
      session = db.withSession(sent || (readOnly ? 'first-unconstrained' : 'first-primary'))
    } catch {
      throw new ApiError(400, `malformed ${BOOKMARK_HEADER} header: D1 does not accept it as a bookmark`, 'header')
    }
    // The request's own env, so concurrent requests never share a session. Code that needs more than
    // prepare/batch (none in the request path) would still find them on the original binding.
    primaries.set(session, db)
    c.env = { ...c.env, DB: session as unknown as D1Database }
    try {
      await next()
    } finally {
      let bookmark: string | null = null
      try {
        bookmark = session.getBookmark()
      } catch {
        /* no bookmark: nothing to pass on */
      }
      if (bookmark) c.header(BOOKMARK_HEADER, bookmark)
    }
  }
}
