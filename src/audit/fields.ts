import { createHash } from 'node:crypto'

/**
 * What an audit entry's `fields` may hold (docs/audit.md "Fields"). Two rules, both security-relevant:
 *
 * 1. Never a secret. `fields` is built only from values a declaration or handler names; as a second line of
 *    defence {@link scrubFields} drops every key that names a secret, at any depth.
 * 2. Never silently cut (issue 24). The entry must identify everything its change touched: a removal placed after
 *    100 no-op items, or the selecting part of a rule padded past 1 KiB, must be in the entry. Values are therefore
 *    stored whole. The whole `fields` JSON is bounded by {@link AUDIT_FIELDS_MAX_BYTES} (1 MiB of UTF-8; a D1 row
 *    holds up to 2,000,000 bytes): an audited route that copies its body into the entry takes at most 256 KiB, and its
 *    fields are that body's values plus ids plus, for a selector update, the seeds it added and removed (each at
 *    most one body); a route with a larger body (an upload, SAML metadata, an extension document) names it (a name,
 *    a slug, a version) and never copies it. So the full change always fits (test/unit/audit-fields.test.ts walks
 *    the route table to keep it so). Should an entry
 *    still exceed the bound, {@link boundFields} replaces its largest values, one at a time, with an explicit
 *    marker `{ omitted: true, sha256, items | chars }` (the SHA-256 of the value's JSON, so the full value can be
 *    proven against the entry later), never with a shortened copy that reads like the whole value.
 *
 * Serving: a page of the audit log holds at most {@link AUDIT_PAGE_FIELDS_CHARS} characters of fields inline
 * ({@link inlineFieldsMax}); an entry whose fields are larger than its share is served as {@link tooLargeForPage}
 * (its size and how to read it whole), so a page of 10,000 entries of 1 MiB each cannot exhaust the isolate's
 * 128 MB. A page of at most 8 entries (`?id=eq:<id>&limit=1`) always serves every entry whole.
 */
export const AUDIT_FIELDS_MAX_BYTES = 1024 * 1024
/** The characters of fields one page of GET /api/v2/audit serves inline, all entries together. */
export const AUDIT_PAGE_FIELDS_CHARS = 8 * 1024 * 1024

const SECRET_KEY = /(secret|password|passwd|private|(^|_)key$|^key|token_key|jwt|session_token|signature|assertion|credential)/i

/** Drops every key that names a secret, at any depth; nothing else is removed or shortened. */
export function scrubFields(v: unknown, depth = 0): unknown {
  // a declaration's fields are a few levels deep; anything deeper is not a field of ours (and is not cut silently)
  if (depth > 8) return { omitted: true, reason: 'nested too deeply' }
  if (Array.isArray(v)) return v.map((x) => scrubFields(x, depth + 1))
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (SECRET_KEY.test(k) || x === undefined) continue
      out[k] = scrubFields(x, depth + 1)
    }
    return out
  }
  return v
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** The marker that stands for a value too large to store: its digest and size, stated as omitted. */
export function omitted(value: unknown): { omitted: true; sha256: string; items?: number; chars?: number } {
  const json = JSON.stringify(value) ?? 'null'
  return {
    omitted: true,
    sha256: sha256Hex(json),
    ...(Array.isArray(value) ? { items: value.length } : typeof value === 'string' ? { chars: value.length } : { chars: json.length }),
  }
}

/**
 * The stored JSON of an entry's (scrubbed) fields: whole when it fits `max`; otherwise its largest top-level values
 * are replaced by {@link omitted} markers, largest first, until it fits (the small ones, ids and the like, stay).
 */
export function boundFields(fields: Record<string, unknown>, max = AUDIT_FIELDS_MAX_BYTES): string {
  let json = JSON.stringify(fields)
  if (utf8Bytes(json) <= max) return json
  const out = { ...fields }
  const bySize = Object.keys(out)
    .map((k) => [k, (JSON.stringify(out[k]) ?? '').length] as const)
    .sort((a, b) => b[1] - a[1])
  for (const [k] of bySize) {
    out[k] = omitted(out[k])
    json = JSON.stringify(out)
    if (utf8Bytes(json) <= max) return json
  }
  return json
}

const encoder = new TextEncoder()
function utf8Bytes(s: string): number {
  return encoder.encode(s).length
}

/** The largest fields (characters) a page of `limit` entries serves inline: its share of the page's budget. */
export function inlineFieldsMax(limit: number): number {
  return Math.min(AUDIT_FIELDS_MAX_BYTES, Math.max(1024, Math.floor(AUDIT_PAGE_FIELDS_CHARS / Math.max(1, limit))))
}

/** What a page serves for an entry whose fields are larger than its share: their size, and how to read them whole. */
export function tooLargeForPage(id: number, chars: number): { omitted: true; chars: number; reason: string } {
  return {
    omitted: true,
    chars,
    reason: `fields too large for a page of this size; GET /api/v2/audit?id=eq:${id}&limit=1 serves them whole`,
  }
}
