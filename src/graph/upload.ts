/**
 * Turning an uploaded file into OpenGraph payloads, with bounded memory.
 *
 * - `application/json`: the body itself is the one payload.
 * - zip: the central directory is read first (no inflation) to list members and their declared sizes.
 *   Each member is inflated on demand, one at a time, into a buffer of exactly its declared size:
 *   fflate's `inflateSync` with a preallocated `out` buffer never grows it, so a member that inflates to
 *   more than it declares is truncated (and then fails JSON parsing) instead of exhausting memory — a
 *   zip bomb costs at most MAX_MEMBER_BYTES. Members are re-inflated for each pass rather than kept.
 *
 * Pure apart from CPU: bytes in, payload loaders out.
 */
import { unzipSync } from 'fflate'
import { ApiError } from '../http/errors'

export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024
export const MAX_MEMBER_BYTES = 20 * 1024 * 1024
export const MAX_MEMBERS = 100
export const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/zip-compressed']
export const ACCEPTED_TYPES = ['application/json', ...ZIP_TYPES]

export interface UploadPart {
  /** name used in error contexts: the zip member name, or the upload's file name */
  name: string
  /** `true` for zip members (their error contexts carry the member name) */
  member: boolean
  load(): Uint8Array
}

interface Entry {
  name: string
  originalSize: number
  compression: number
}

export function uploadParts(bytes: Uint8Array, mediaType: string, fileName: string): UploadPart[] {
  if (!ZIP_TYPES.includes(mediaType)) return [{ name: fileName, member: false, load: () => bytes }]
  const entries: Entry[] = []
  try {
    unzipSync(bytes, {
      filter: (f) => {
        entries.push({ name: f.name, originalSize: f.originalSize, compression: f.compression })
        return false
      },
    })
  } catch {
    throw new ApiError(400, 'the upload is not a valid zip archive', 'body')
  }
  const members = entries.filter((e) => !e.name.endsWith('/') && !e.name.startsWith('__MACOSX/'))
  if (members.length === 0) throw new ApiError(400, 'the zip archive contains no files', 'body')
  if (members.length > MAX_MEMBERS) throw new ApiError(400, `the zip archive holds ${members.length} files; at most ${MAX_MEMBERS} are accepted`, 'body')
  const seen = new Set<string>()
  for (const m of members) {
    if (seen.has(m.name)) throw new ApiError(400, `the zip archive contains "${m.name}" more than once`, m.name)
    seen.add(m.name)
    if (/\.zip$/i.test(m.name)) throw new ApiError(400, `nested zip archives are not accepted ("${m.name}")`, m.name)
    if (m.compression !== 0 && m.compression !== 8)
      throw new ApiError(400, `"${m.name}" uses an unsupported compression method (${m.compression}); use deflate or store`, m.name)
    if (m.originalSize > MAX_MEMBER_BYTES)
      throw new ApiError(413, `"${m.name}" inflates to ${m.originalSize} bytes, above the limit of ${MAX_MEMBER_BYTES} bytes per file`, m.name)
  }
  return members.map((m) => ({
    name: m.name,
    member: true,
    load: () => {
      let files: Record<string, Uint8Array>
      try {
        files = unzipSync(bytes, { filter: (f) => f.name === m.name })
      } catch {
        throw new ApiError(400, `"${m.name}" could not be inflated`, m.name)
      }
      const data = files[m.name]
      if (!data) throw new ApiError(400, `"${m.name}" could not be read from the archive`, m.name)
      return data
    },
  }))
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
