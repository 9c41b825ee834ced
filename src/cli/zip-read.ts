/// <reference types="node" />
/**
 * Reading a zip archive on disk member by member, as streams, for `edgehound ingest` (a SharpHound zip
 * of a large domain inflates to hundreds of MiB; it is never held whole). The central directory gives
 * each member's name, method, sizes and local header; a member's bytes are a file range read through
 * zlib's raw inflater (method 8) or as is (method 0), chunk by chunk with back-pressure.
 *
 * Refused with a message: ZIP64 archives, encrypted members (SharpHound's --zippassword), other methods.
 */
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { createInflateRaw } from 'node:zlib'

export interface ZipMember {
  name: string
  method: number
  compressedSize: number
  size: number
  /** offset of the member's local file header */
  localHeader: number
  encrypted: boolean
}

export class ZipError extends Error {}

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50

/** The members of the archive at `path` (directories and __MACOSX/ entries left out). */
export async function listZip(path: string): Promise<ZipMember[]> {
  const fh = await open(path, 'r')
  try {
    const { size } = await fh.stat()
    const tailLen = Math.min(size, 65535 + 22)
    const tail = Buffer.alloc(tailLen)
    await fh.read(tail, 0, tailLen, size - tailLen)
    let eocd = -1
    for (let i = tailLen - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === EOCD) {
        eocd = i
        break
      }
    if (eocd < 0) throw new ZipError('not a zip archive (no end of central directory)')
    const entries = tail.readUInt16LE(eocd + 10)
    const cdSize = tail.readUInt32LE(eocd + 12)
    const cdOffset = tail.readUInt32LE(eocd + 16)
    if (entries === 0xffff || cdOffset === 0xffffffff) throw new ZipError('ZIP64 archives are not supported: re-create the archive, or upload its files')
    const cd = Buffer.alloc(cdSize)
    await fh.read(cd, 0, cdSize, cdOffset)
    const out: ZipMember[] = []
    let p = 0
    for (let i = 0; i < entries; i++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL) throw new ZipError('corrupt central directory')
      const flags = cd.readUInt16LE(p + 8)
      const method = cd.readUInt16LE(p + 10)
      const compressedSize = cd.readUInt32LE(p + 20)
      const sizeU = cd.readUInt32LE(p + 24)
      const nameLen = cd.readUInt16LE(p + 28)
      const extraLen = cd.readUInt16LE(p + 30)
      const commentLen = cd.readUInt16LE(p + 32)
      const localHeader = cd.readUInt32LE(p + 42)
      const name = cd.toString('utf8', p + 46, p + 46 + nameLen)
      p += 46 + nameLen + extraLen + commentLen
      if (compressedSize === 0xffffffff || sizeU === 0xffffffff || localHeader === 0xffffffff)
        throw new ZipError(`"${name}": ZIP64 members are not supported`)
      if (name.endsWith('/') || name.startsWith('__MACOSX/')) continue
      out.push({ name, method, compressedSize, size: sizeU, localHeader, encrypted: (flags & 1) === 1 })
    }
    return out
  } finally {
    await fh.close()
  }
}

/** A member's uncompressed bytes as a stream of chunks. */
export async function* readMember(path: string, m: ZipMember): AsyncGenerator<Uint8Array> {
  if (m.encrypted) throw new ZipError(`"${m.name}" is encrypted: zip without a password (SharpHound --zippassword) or upload the files`)
  if (m.method !== 0 && m.method !== 8) throw new ZipError(`"${m.name}" uses compression method ${m.method}; only deflate and store are supported`)
  const fh = await open(path, 'r')
  let start: number
  try {
    const h = Buffer.alloc(30)
    await fh.read(h, 0, 30, m.localHeader)
    if (h.readUInt32LE(0) !== LOCAL) throw new ZipError(`"${m.name}": corrupt local header`)
    start = m.localHeader + 30 + h.readUInt16LE(26) + h.readUInt16LE(28)
  } finally {
    await fh.close()
  }
  if (m.compressedSize === 0) return
  const raw = createReadStream(path, { start, end: start + m.compressedSize - 1, highWaterMark: 256 * 1024 })
  const stream = m.method === 8 ? raw.pipe(createInflateRaw({ chunkSize: 256 * 1024 })) : raw
  let total = 0
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length
      if (total > m.size) throw new ZipError(`"${m.name}" inflates past its declared size (${m.size} bytes)`)
      yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length)
    }
  } catch (e) {
    if (e instanceof ZipError) throw e
    throw new ZipError(`"${m.name}" could not be inflated (truncated or corrupt archive): ${(e as Error).message}`)
  } finally {
    raw.destroy()
  }
  if (total !== m.size) throw new ZipError(`"${m.name}" is truncated: ${total} of ${m.size} bytes`)
}
