import { describe, expect, it } from 'vitest'
import { bomEncoding, toUtf8 } from '../../src/graph/encoding'

/** `text` in the given encoding, with its byte order mark. */
function encode(text: string, enc: 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be'): Uint8Array {
  const cps = [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)]
  if (enc.startsWith('utf-16')) {
    const units: number[] = []
    for (const cp of cps) if (cp > 0xffff) units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff))
    else units.push(cp)
    const b = new DataView(new ArrayBuffer(units.length * 2))
    units.forEach((u, i) => b.setUint16(i * 2, u, enc === 'utf-16le'))
    return new Uint8Array(b.buffer)
  }
  const b = new DataView(new ArrayBuffer(cps.length * 4))
  cps.forEach((cp, i) => b.setUint32(i * 4, cp, enc === 'utf-32le'))
  return new Uint8Array(b.buffer)
}

const utf8 = (s: string) => new TextEncoder().encode(s)

describe('toUtf8: UTF-16 / UTF-32 with a byte order mark, as BloodHound normalises a JSON upload', () => {
  const text = '{"meta": {"type": "users"}, "data": [{"ObjectIdentifier": "S-1", "Properties": {"name": "Zoë 😀@NORTHWIND.LOCAL"}}]}'

  for (const enc of ['utf-16le', 'utf-16be', 'utf-32le', 'utf-32be'] as const)
    it(`${enc}: detected by its BOM and re-encoded, BOM dropped, astral characters kept`, () => {
      const bytes = encode(text, enc)
      expect(bomEncoding(bytes)).toBe(enc)
      expect(new TextDecoder().decode(toUtf8(bytes))).toBe(text)
    })

  it('UTF-8 (with or without its BOM) and anything else: the same bytes, untouched', () => {
    const plain = utf8(text)
    expect(toUtf8(plain)).toBe(plain)
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...plain])
    expect(toUtf8(withBom)).toBe(withBom)
    expect(bomEncoding(new Uint8Array([0xfe]))).toBeNull()
  })

  it('a surrogate pair across the decoder chunk boundary stays one character; a truncated last unit is U+FFFD', () => {
    const long = 'a'.repeat(32_767) + '😀' + 'b'
    expect(new TextDecoder().decode(toUtf8(encode(long, 'utf-16le')))).toBe(long)
    const cut = encode('{"a": 1}', 'utf-16le')
    expect(new TextDecoder().decode(toUtf8(cut.subarray(0, cut.length - 1)))).toBe('{"a": 1\uFFFD')
    // an unpaired surrogate and a code point above U+10FFFF
    const bad = new Uint8Array([0xff, 0xfe, 0x00, 0xd8, 0x41, 0x00])
    expect(new TextDecoder().decode(toUtf8(bad))).toBe('\uFFFDA')
    const big = new Uint8Array([0xff, 0xfe, 0, 0, 0, 0, 0x11, 0])
    expect(new TextDecoder().decode(toUtf8(big))).toBe('\uFFFD')
  })
})
