/**
 * A JSON upload written in UTF-16 or UTF-32 with a byte order mark, re-encoded as UTF-8 before it is read.
 *
 * Why: Windows tools write such files (Windows PowerShell 5's `Out-File` and `>` write UTF-16LE with a BOM), and
 * a SharpHound or AzureHound file passed through them is otherwise intact. BloodHound accepts them: its JSON
 * upload path normalises the encoding by the byte order mark before reading (its bomenc package: UTF-8 BOM
 * dropped, UTF-16 LE/BE and UTF-32 LE/BE converted, anything else must be valid UTF-8). EdgeHound does the
 * same for a plain JSON upload (zip members are read as they are, as BloodHound reads them). A UTF-8 BOM is
 * skipped by the JSON reader itself (src/graph/json-scan.ts); without a BOM the bytes are UTF-8 or refused.
 *
 * Detection (the BOM alone; no guessing from content): FF FE 00 00 UTF-32LE, 00 00 FE FF UTF-32BE, FF FE UTF-16LE,
 * FE FF UTF-16BE. A trailing odd byte (a truncated file) and unpaired surrogates or code points above U+10FFFF
 * become U+FFFD, as BloodHound's decoder does; the JSON reader then judges the text.
 *
 * Cost: one pass, in chunks; the result is at most 1.5 times the input (a UTF-16 unit becomes at most 3 UTF-8
 * bytes; a UTF-32 unit at most 4), and usually half of it (ASCII).
 *
 * Pure: bytes in, bytes out.
 */

export type BomEncoding = 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be'

/** The encoding named by the byte order mark, or null (UTF-8, with or without its BOM, or no BOM at all). */
export function bomEncoding(b: Uint8Array): BomEncoding | null {
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) return 'utf-32le'
  if (b.length >= 4 && b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff) return 'utf-32be'
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return 'utf-16le'
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return 'utf-16be'
  return null
}

/** Code units decoded per chunk (a string of this many units is encoded at a time). */
const CHUNK_UNITS = 32_768

/** The bytes as UTF-8: the same array when there is no UTF-16/32 byte order mark. */
export function toUtf8(bytes: Uint8Array): Uint8Array {
  const enc = bomEncoding(bytes)
  if (!enc) return bytes
  const wide = enc.startsWith('utf-32')
  const unit = wide ? 4 : 2
  const little = enc.endsWith('le')
  const start = unit // the BOM
  const units = Math.floor((bytes.length - start) / unit)
  const odd = (bytes.length - start) % unit !== 0
  const out = new Uint8Array(Math.ceil(units * (wide ? 4 : 3)) + (odd ? 3 : 0))
  const encoder = new TextEncoder()
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let written = 0
  const codes: number[] = []
  const flush = () => {
    if (codes.length === 0) return
    // String.fromCharCode with UTF-16 units; TextEncoder turns unpaired surrogates into U+FFFD
    const r = encoder.encodeInto(String.fromCharCode(...codes), out.subarray(written))
    written += r.written
    codes.length = 0
  }
  for (let i = 0; i < units; i++) {
    const at = start + i * unit
    if (wide) {
      const cp = view.getUint32(at, little)
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) codes.push(0xfffd)
      else if (cp > 0xffff) codes.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff))
      else codes.push(cp)
    } else codes.push(view.getUint16(at, little))
    // never split a surrogate pair across chunks: flush only after a unit that is not a high surrogate
    if (codes.length >= CHUNK_UNITS) {
      const last = codes[codes.length - 1]
      if (last < 0xd800 || last > 0xdbff) flush()
    }
  }
  if (odd) codes.push(0xfffd)
  flush()
  return out.subarray(0, written)
}
