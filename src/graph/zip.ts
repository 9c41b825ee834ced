/**
 * Reading a zip archive with bounded work (pure: bytes in, bytes out).
 *
 * Why not fflate's `unzipSync`: it inflates a member into a buffer of its declared size but keeps
 * inflating past the end of that buffer (the extra bytes are dropped, the CPU is not), so a member that
 * declares 1 KB and inflates to 2 GiB costs the CPU of 2 GiB. Here:
 *
 *  - `listZip` reads only the central directory (no inflation) and returns each member's declared sizes
 *    and where its data starts, so the caller can refuse an archive on its declared sizes before any
 *    byte is inflated;
 *  - `inflateMember` streams the member through fflate's `Inflate` a few KiB of input at a time and
 *    stops as soon as the output would pass the member's declared size (or the caller's limit, if
 *    smaller). One input step of STEP bytes inflates to at most ~1032 × STEP bytes (DEFLATE's best
 *    ratio), so the overshoot before the check is at most ~2 MiB of CPU and memory, whatever the member
 *    claims. A member must inflate to exactly its declared size: anything else is refused.
 *
 * Supported: stored (0) and deflate (8) members, ZIP64 sizes and offsets, UTF-8 or CP437 names.
 * Refused: encrypted members, multi-disk archives, other compression methods (the caller's message).
 */
import { Inflate } from 'fflate'

export class ZipError extends Error {}

/** Input bytes per inflation step: bounds the work done before the output size is checked again. */
export const STEP = 2 * 1024

export interface ZipEntry {
  name: string
  /** compression method: 0 stored, 8 deflate */
  method: number
  encrypted: boolean
  compressedSize: number
  /** declared uncompressed size */
  size: number
  /** offset of the member's local header */
  localOffset: number
}

const u16 = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8)
const u32 = (b: Uint8Array, i: number) => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16)) + b[i + 3] * 0x1000000
const u64 = (b: Uint8Array, i: number) => u32(b, i) + u32(b, i + 4) * 0x100000000
const MAX32 = 0xffffffff

function need(b: Uint8Array, at: number, len: number, what: string): void {
  if (at < 0 || at + len > b.length) throw new ZipError(`truncated ${what}`)
}

/** The members listed in the central directory, in its order. Throws ZipError on a malformed archive. */
export function listZip(b: Uint8Array): ZipEntry[] {
  // End of central directory record: 22 bytes plus a comment of at most 65535 bytes, at the very end.
  let eocd = -1
  for (let i = b.length - 22; i >= 0 && i >= b.length - 22 - 0xffff; i--)
    if (u32(b, i) === 0x06054b50) {
      eocd = i
      break
    }
  if (eocd < 0) throw new ZipError('no end of central directory record')
  if (u16(b, eocd + 4) !== 0 || u16(b, eocd + 6) !== 0) throw new ZipError('multi-disk archives are not supported')
  let count = u16(b, eocd + 10)
  let cdOffset = u32(b, eocd + 16)
  if (count === 0xffff || cdOffset === MAX32) {
    // ZIP64: the locator sits just before the classic record and points at the ZIP64 record.
    need(b, eocd - 20, 20, 'ZIP64 locator')
    if (u32(b, eocd - 20) !== 0x07064b50) throw new ZipError('missing ZIP64 locator')
    const z = u64(b, eocd - 12)
    need(b, z, 56, 'ZIP64 end of central directory')
    if (u32(b, z) !== 0x06064b50) throw new ZipError('bad ZIP64 end of central directory')
    count = u64(b, z + 32)
    cdOffset = u64(b, z + 48)
  }
  const entries: ZipEntry[] = []
  let p = cdOffset
  for (let k = 0; k < count; k++) {
    need(b, p, 46, 'central directory')
    if (u32(b, p) !== 0x02014b50) throw new ZipError('bad central directory entry')
    const flags = u16(b, p + 8)
    const method = u16(b, p + 10)
    let compressedSize = u32(b, p + 20)
    let size = u32(b, p + 24)
    const nameLen = u16(b, p + 28)
    const extraLen = u16(b, p + 30)
    const commentLen = u16(b, p + 32)
    let localOffset = u32(b, p + 42)
    need(b, p + 46, nameLen + extraLen, 'central directory entry')
    const nameBytes = b.subarray(p + 46, p + 46 + nameLen)
    const name = new TextDecoder(flags & 0x800 ? 'utf-8' : 'latin1').decode(nameBytes)
    if (size === MAX32 || compressedSize === MAX32 || localOffset === MAX32) {
      // ZIP64 extended information (header id 1): only the fields saturated above, in this order.
      let e = p + 46 + nameLen
      const end = e + extraLen
      let found = false
      while (e + 4 <= end) {
        const id = u16(b, e)
        const len = u16(b, e + 2)
        if (id === 1) {
          let q = e + 4
          const take = () => {
            if (q + 8 > e + 4 + len) throw new ZipError('short ZIP64 extra field')
            const v = u64(b, q)
            q += 8
            return v
          }
          if (size === MAX32) size = take()
          if (compressedSize === MAX32) compressedSize = take()
          if (localOffset === MAX32) localOffset = take()
          found = true
          break
        }
        e += 4 + len
      }
      if (!found) throw new ZipError('missing ZIP64 extra field')
    }
    entries.push({ name, method, encrypted: (flags & 1) !== 0, compressedSize, size, localOffset })
    p += 46 + nameLen + extraLen + commentLen
  }
  return entries
}

/** The member's compressed bytes (after its local header). */
function memberData(b: Uint8Array, e: ZipEntry): Uint8Array {
  need(b, e.localOffset, 30, 'local header')
  if (u32(b, e.localOffset) !== 0x04034b50) throw new ZipError('bad local header')
  const start = e.localOffset + 30 + u16(b, e.localOffset + 26) + u16(b, e.localOffset + 28)
  need(b, start, e.compressedSize, 'member data')
  return b.subarray(start, start + e.compressedSize)
}

export type InflateOutcome = { ok: true; data: Uint8Array } | { ok: false; reason: 'over' | 'size' | 'corrupt' }

const OVER = new Error('over')

/**
 * The member's bytes, inflating at most `limit` bytes (or its declared size, if smaller) and stopping
 * as soon as the output would pass that. `over`: it inflates to more than that; `size`: it does not
 * inflate to its declared size; `corrupt`: the data is not a valid stream.
 */
export function inflateMember(b: Uint8Array, e: ZipEntry, limit: number): InflateOutcome {
  let data: Uint8Array
  try {
    data = memberData(b, e)
  } catch {
    return { ok: false, reason: 'corrupt' }
  }
  const cap = Math.min(limit, e.size)
  if (e.method === 0) {
    if (data.length > cap) return { ok: false, reason: 'over' }
    return data.length === e.size ? { ok: true, data } : { ok: false, reason: 'size' }
  }
  const out = new Uint8Array(cap)
  let n = 0
  const inflater = new Inflate((chunk) => {
    if (n + chunk.length > cap) throw OVER
    out.set(chunk, n)
    n += chunk.length
  })
  try {
    if (data.length === 0) inflater.push(new Uint8Array(0), true)
    for (let i = 0; i < data.length; i += STEP) inflater.push(data.subarray(i, i + STEP), i + STEP >= data.length)
  } catch (err) {
    return { ok: false, reason: err === OVER ? 'over' : 'corrupt' }
  }
  return n === e.size ? { ok: true, data: out } : { ok: false, reason: 'size' }
}
