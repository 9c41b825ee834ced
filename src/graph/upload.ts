/**
 * Turning an uploaded file into OpenGraph payloads, with bounded work (budgets in docs/budgets.md).
 *
 * - `application/json`: the body itself is the one payload (at most MAX_UPLOAD_BYTES, the route's body limit),
 *   re-encoded as UTF-8 when a byte order mark says UTF-16 or UTF-32 (src/graph/encoding.ts).
 * - zip: the central directory is read first (src/graph/zip.ts, no inflation) to list members and their
 *   declared sizes; the archive is refused on those alone (members, bytes per member, inflated bytes in
 *   total) before any byte is inflated. Each member is then inflated on demand, one at a time, by a
 *   streaming inflater that stops as soon as the output would pass the member's declared size: a member
 *   that lies about its size (a zip bomb) is refused after at most its declared size plus one input step,
 *   so an accepted archive inflates at most MAX_INFLATED_BYTES. A member is inflated once and kept for the
 *   later passes (validate, nodes, edges): the archive then holds at most MAX_INFLATED_BYTES, as a JSON
 *   upload holds its body, instead of inflating up to 20 MiB per pass and leaving the earlier copies to
 *   the garbage collector (and paying the inflation's CPU three times).
 *
 * Pure apart from CPU: bytes in, payload loaders out.
 */
import { ApiError } from '../http/errors'
import { overBudget } from '../http/budget'
import { inflateMember, listZip, ZipError, type ZipEntry } from './zip'
import { toUtf8 } from './encoding'

/** the route's body limit: a JSON file, or a zip archive as sent */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024
/** declared (and actual) inflated size of one zip member */
export const MAX_MEMBER_BYTES = 20 * 1024 * 1024
/**
 * Inflated size of a whole zip archive: the same as the largest JSON upload, so an archive costs no more
 * CPU, memory or D1 statements than a plain upload can (a 20 MiB OpenGraph file needs about 230 statements).
 */
export const MAX_INFLATED_BYTES = 20 * 1024 * 1024
export const MAX_MEMBERS = 100
export const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/zip-compressed']
export const ACCEPTED_TYPES = ['application/json', ...ZIP_TYPES]

const SPLIT = 'split the archive into several uploads to the same job'

export interface UploadPart {
  /** name used in error contexts: the zip member name, or the upload's file name */
  name: string
  /** `true` for zip members (their error contexts carry the member name) */
  member: boolean
  load(): Uint8Array
}

export function uploadParts(bytes: Uint8Array, mediaType: string, fileName: string): UploadPart[] {
  if (!ZIP_TYPES.includes(mediaType)) {
    // a UTF-16 / UTF-32 file with a byte order mark is re-encoded once, as BloodHound does (src/graph/encoding.ts)
    let utf8: Uint8Array | null = null
    return [{ name: fileName, member: false, load: () => (utf8 ??= toUtf8(bytes)) }]
  }
  let entries: ZipEntry[]
  try {
    entries = listZip(bytes)
  } catch (e) {
    if (e instanceof ZipError) throw new ApiError(400, 'the upload is not a valid zip archive', 'body')
    throw e
  }
  const members = entries.filter((e) => !e.name.endsWith('/') && !e.name.startsWith('__MACOSX/'))
  if (members.length === 0) throw new ApiError(400, 'the zip archive contains no files', 'body')
  if (members.length > MAX_MEMBERS)
    throw overBudget(413, { context: 'body', what: `the zip archive's file count (${members.length})`, budget: 'files per upload', limit: MAX_MEMBERS, narrow: SPLIT })
  const seen = new Set<string>()
  let total = 0
  for (const m of members) {
    if (seen.has(m.name)) throw new ApiError(400, `the zip archive contains "${m.name}" more than once`, m.name)
    seen.add(m.name)
    if (/\.zip$/i.test(m.name)) throw new ApiError(400, `nested zip archives are not accepted ("${m.name}")`, m.name)
    if (m.encrypted) throw new ApiError(400, `"${m.name}" is encrypted; encrypted archives are not accepted`, m.name)
    if (m.method !== 0 && m.method !== 8)
      throw new ApiError(400, `"${m.name}" uses an unsupported compression method (${m.method}); use deflate or store`, m.name)
    if (m.size > MAX_MEMBER_BYTES)
      throw overBudget(413, {
        context: m.name,
        what: `"${m.name}" inflates to ${m.size} bytes, which`,
        budget: 'inflated bytes per file',
        limit: MAX_MEMBER_BYTES,
        narrow: 'split the file into several files',
      })
    total += m.size
  }
  if (total > MAX_INFLATED_BYTES)
    throw overBudget(413, { context: 'body', what: `the zip archive inflates to ${total} bytes, which`, budget: 'inflated bytes per upload', limit: MAX_INFLATED_BYTES, narrow: SPLIT })
  return members.map((m) => {
    let inflated: Uint8Array | null = null
    return {
      name: m.name,
      member: true,
      load: () => {
        if (inflated) return inflated
        const r = inflateMember(bytes, m, MAX_MEMBER_BYTES)
        if (r.ok) return (inflated = r.data)
        if (r.reason === 'over')
          throw new ApiError(400, `"${m.name}" inflates to more than the ${m.size} bytes it declares (a corrupt archive or a zip bomb); nothing was written`, m.name)
        if (r.reason === 'size') throw new ApiError(400, `"${m.name}" does not inflate to the ${m.size} bytes it declares`, m.name)
        throw new ApiError(400, `"${m.name}" could not be inflated`, m.name)
      },
    }
  })
}

/** UTF-8 byte length of a string without encoding it. */
const NON_ASCII = /[^\x00-\x7f]/

export function utf8Length(s: string): number {
  let n = s.length
  if (!NON_ASCII.test(s)) return n
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) n += 1
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 2 // surrogate pair: 4 bytes for 2 UTF-16 units
      i++
    } else n += 2
  }
  return n
}

/**
 * Packs JSON values into JSON arrays of at most `maxBytes` UTF-8 bytes: one array per statement, so
 * each statement binds one parameter (D1: ≤100 parameters, ≤100 KB per statement).
 */
export class JsonArrayChunker<M = undefined> {
  private parts: string[] = []
  private meta: M[] = []
  private bytes = 2

  constructor(private readonly maxBytes: number) {}

  /** Adds a value; returns the chunk completed by it (the values before it) if it did not fit. */
  push(json: string, meta: M): { json: string; meta: M[] } | null {
    const len = utf8Length(json) + 1
    let done: { json: string; meta: M[] } | null = null
    if (this.parts.length > 0 && this.bytes + len > this.maxBytes) done = this.flush()
    this.parts.push(json)
    this.meta.push(meta)
    this.bytes += len
    return done
  }

  flush(): { json: string; meta: M[] } | null {
    if (this.parts.length === 0) return null
    const out = { json: `[${this.parts.join(',')}]`, meta: this.meta }
    this.parts = []
    this.meta = []
    this.bytes = 2
    return out
  }
}
