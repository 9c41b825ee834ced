/// <reference types="node" />
/**
 * The Cap'n Proto edit that gives Miniflare's workerd its V8 flags (the Cypher bench's heap cap). Run with
 * `node --import tsx --test bench/test/*.test.ts` (part of `npm run bench:smoke`). That workerd accepts the
 * result is shown by the bench itself: `--heap-cap 40` at 20 k edges makes the hostile `[*]` query abort
 * workerd with "Reached heap limit", and workerd rejects an unknown flag in the list ("unrecognized V8 flag").
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addV8Flags, readV8Flags } from '../lib/workerd-v8-flags'

/** A one-segment message: root struct pointer → a struct of 1 data word and 6 pointers (Config's shape), slot 0 a text. */
function configLike(): Buffer {
  const words = 1 + 1 + 6 + 1 // root pointer, data word, 6 pointers, "ab\0" text
  const seg = Buffer.alloc(words * 8)
  seg.writeUInt32LE(0 << 2, 0) // struct pointer, offset 0: the struct starts right after it
  seg.writeUInt32LE(1 | (6 << 16), 4) // 1 data word, 6 pointers
  seg.writeBigUInt64LE(0xdeadbeefn, 8) // data word
  // pointer 0 (word 2) → text "ab" at word 8: list pointer, offset 8 - 2 - 1 = 5, bytes, 3 elements
  seg.writeInt32LE((5 << 2) | 1, 16)
  seg.writeUInt32LE((3 << 3) | 2, 20)
  seg.write('ab\0', 64)
  const header = Buffer.alloc(8)
  header.writeUInt32LE(0, 0)
  header.writeUInt32LE(words, 4)
  return Buffer.concat([header, seg])
}

describe('addV8Flags', () => {
  it('sets Config.v8Flags (pointer slot 2) and leaves every other byte of the message as it was', () => {
    const msg = configLike()
    assert.deepEqual(readV8Flags(msg), [])
    const out = addV8Flags(msg, ['--max-heap-size=128', '--trace-gc'])
    assert.deepEqual(readV8Flags(out), ['--max-heap-size=128', '--trace-gc'])
    // two segments now: header grows to 16 bytes, the old segment follows unchanged but for slot 2 (word 4)
    assert.equal(out.readUInt32LE(0), 1)
    const oldSeg = msg.subarray(8)
    const newSeg = out.subarray(16, 16 + oldSeg.length)
    for (let w = 0; w < oldSeg.length / 8; w++)
      if (w !== 4) assert.deepEqual(newSeg.subarray(w * 8, w * 8 + 8), oldSeg.subarray(w * 8, w * 8 + 8), `word ${w}`)
    assert.equal(newSeg.readUInt32LE(32) & 3, 2, 'slot 2 is a far pointer')
  })

  it('handles a root reached through a far pointer, and flags of any length (word padding)', () => {
    // segment 0: a far pointer to a landing pad at word 0 of segment 1; segment 1: pad + struct
    const seg0 = Buffer.alloc(8)
    seg0.writeUInt32LE((0 << 3) | 2, 0)
    seg0.writeUInt32LE(1, 4)
    const seg1 = Buffer.alloc((1 + 1 + 6) * 8)
    seg1.writeUInt32LE(0, 0) // struct pointer, offset 0
    seg1.writeUInt32LE(1 | (6 << 16), 4)
    const header = Buffer.alloc(16)
    header.writeUInt32LE(1, 0)
    header.writeUInt32LE(1, 4)
    header.writeUInt32LE(8, 8)
    const flags = ['--x', '--exactly-7', '--a-flag-of-sixteen', '']
    assert.deepEqual(readV8Flags(addV8Flags(Buffer.concat([header, seg0, seg1]), flags)), flags)
  })

  it('refuses to overwrite flags already there, and changes nothing when given none', () => {
    const once = addV8Flags(configLike(), ['--a'])
    assert.throws(() => addV8Flags(once, ['--b']), /already set/)
    const msg = configLike()
    assert.equal(addV8Flags(msg, []), msg)
  })
})
