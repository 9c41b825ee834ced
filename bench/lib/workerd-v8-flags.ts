/// <reference types="node" />
/**
 * V8 flags for Miniflare's workerd (the benchmark's production-like heap cap).
 *
 * workerd takes V8 flags only from its config (`Config.v8Flags`, workerd.capnp field @2: "List of
 * 'command-line' flags to pass to V8"); it has no command-line option for them, and Miniflare
 * 4.20260426 never sets the field (its config object has services, sockets, extensions and
 * structuredLogging only). Miniflare does let us choose the runtime binary (`MINIFLARE_WORKERD_PATH`)
 * and hands the config to it as one binary Cap'n Proto message on stdin (`workerd serve --binary … -`).
 * So `workerdWithV8Flags` writes a small shell script that reads that message, adds the flags with
 * `addV8Flags` below, and `exec`s the real workerd on the result: the process Miniflare spawned *is*
 * workerd (same pid: its SIGKILL on dispose, the control pipe on fd 3 and our /proc CPU accounting all
 * work unchanged).
 *
 * `addV8Flags` edits the message without a Cap'n Proto library (Miniflare bundles capnp-es privately):
 * the flags go into a new segment (a landing pad, a list of text pointers, the texts), and the root
 * struct's null pointer slot 2 becomes a far pointer to that landing pad. Encoding (capnproto.org,
 * "Encoding spec"): a message is a segment table (u32 count − 1, u32 size in words per segment, padded
 * to 8 bytes) followed by the segments; pointers are 64-bit little-endian words whose two low bits say
 * the kind: 0 struct (offset in words from the pointer's end in bits 2–31, then u16 data words and
 * u16 pointer count), 1 list (offset, then element size in bits 0–2 of the high word — 2 = byte,
 * 6 = pointer — and element count in bits 3–31), 2 far (bit 2 = double-far, landing pad offset in
 * words in bits 3–31, target segment id in the high word). Text is a byte list including its NUL.
 */
import { chmodSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const V8_FLAGS_SLOT = 2 // Config.v8Flags @2 is the root struct's third pointer

function u32(buf: Buffer, off: number): number {
  return buf.readUInt32LE(off)
}

/** `buf` (a whole binary Cap'n Proto message whose root is a workerd Config) with `flags` as Config.v8Flags. */
export function addV8Flags(buf: Buffer, flags: string[]): Buffer {
  if (flags.length === 0) return buf
  const segCount = u32(buf, 0) + 1
  const sizes: number[] = []
  for (let i = 0; i < segCount; i++) sizes.push(u32(buf, 4 + 4 * i))
  const headerBytes = (4 * (1 + segCount) + 7) & ~7
  const segStart: number[] = []
  let at = headerBytes
  for (const s of sizes) {
    segStart.push(at)
    at += s * 8
  }
  if (at !== buf.length) throw new Error(`not a single Cap'n Proto message (${buf.length} bytes, segments say ${at})`)

  // Locate the root struct (pointer at word 0 of segment 0; a struct pointer or a single far pointer).
  let seg = 0
  let ptrWord = 0
  let lo = u32(buf, segStart[0])
  let hi = u32(buf, segStart[0] + 4)
  if ((lo & 3) === 2) {
    if (lo & 4) throw new Error('double-far root pointer: not handled')
    seg = hi
    ptrWord = lo >>> 3
    lo = u32(buf, segStart[seg] + ptrWord * 8)
    hi = u32(buf, segStart[seg] + ptrWord * 8 + 4)
  }
  if ((lo & 3) !== 0) throw new Error('root pointer is not a struct pointer')
  const structWord = ptrWord + 1 + ((lo | 0) >> 2)
  const dataWords = hi & 0xffff
  const ptrCount = hi >>> 16
  if (ptrCount <= V8_FLAGS_SLOT) throw new Error(`root struct has ${ptrCount} pointers: no v8Flags slot`)
  const slotOff = segStart[seg] + (structWord + dataWords + V8_FLAGS_SLOT) * 8
  if (buf.readBigUInt64LE(slotOff) !== 0n) throw new Error('Config.v8Flags is already set: refusing to overwrite it')

  // The new segment: [landing pad][k text pointers][texts, each padded to whole words].
  const texts = flags.map((f) => Buffer.from(`${f}\0`, 'utf8'))
  const textWords = texts.map((t) => Math.ceil(t.length / 8))
  const k = texts.length
  const words = 1 + k + textWords.reduce((a, b) => a + b, 0)
  const out = Buffer.alloc(words * 8)
  const listPtr = (word: number, target: number, elemSize: number, count: number) => {
    out.writeInt32LE(((target - word - 1) << 2) | 1, word * 8)
    out.writeUInt32LE(((count << 3) | elemSize) >>> 0, word * 8 + 4)
  }
  listPtr(0, 1, 6, k) // landing pad → the list of k pointers at word 1
  let t = 1 + k
  for (let i = 0; i < k; i++) {
    listPtr(1 + i, t, 2, texts[i].length)
    texts[i].copy(out, t * 8)
    t += textWords[i]
  }

  // Rebuild: header with one more segment, old segments unchanged, the slot turned into a far pointer.
  const newCount = segCount + 1
  const newHeader = Buffer.alloc((4 * (1 + newCount) + 7) & ~7)
  newHeader.writeUInt32LE(newCount - 1, 0)
  for (let i = 0; i < segCount; i++) newHeader.writeUInt32LE(sizes[i], 4 + 4 * i)
  newHeader.writeUInt32LE(words, 4 + 4 * segCount)
  const body = Buffer.from(buf.subarray(headerBytes))
  const slotInBody = slotOff - headerBytes
  body.writeUInt32LE(2, slotInBody) // far pointer, single landing pad at word 0
  body.writeUInt32LE(segCount, slotInBody + 4) // … of the new segment
  return Buffer.concat([newHeader, body, out])
}

/** The texts of Config.v8Flags in a message (for tests; follows struct, list and single far pointers). */
export function readV8Flags(buf: Buffer): string[] {
  const segCount = u32(buf, 0) + 1
  const headerBytes = (4 * (1 + segCount) + 7) & ~7
  const segStart: number[] = []
  let at = headerBytes
  for (let i = 0; i < segCount; i++) {
    segStart.push(at)
    at += u32(buf, 4 + 4 * i) * 8
  }
  // resolve the pointer at (seg, word) to [seg, word of its target, lo, hi] (single far pointers followed)
  const deref = (seg: number, word: number): [number, number, number, number] => {
    let lo = u32(buf, segStart[seg] + word * 8)
    let hi = u32(buf, segStart[seg] + word * 8 + 4)
    if ((lo & 3) === 2) {
      seg = hi
      word = lo >>> 3
      lo = u32(buf, segStart[seg] + word * 8)
      hi = u32(buf, segStart[seg] + word * 8 + 4)
    }
    return [seg, word + 1 + ((lo | 0) >> 2), lo, hi]
  }
  const [rs, rw, , rhi] = deref(0, 0)
  const slotWord = rw + (rhi & 0xffff) + V8_FLAGS_SLOT
  if (u32(buf, segStart[rs] + slotWord * 8) === 0 && u32(buf, segStart[rs] + slotWord * 8 + 4) === 0) return []
  const [ls, lw, , lhi] = deref(rs, slotWord)
  const out: string[] = []
  for (let i = 0; i < lhi >>> 3; i++) {
    const [ts, tw, , thi] = deref(ls, lw + i)
    const len = (thi >>> 3) - 1
    out.push(buf.toString('utf8', segStart[ts] + tw * 8, segStart[ts] + tw * 8 + len))
  }
  return out
}

/**
 * Writes `dir/workerd` — a wrapper that reads the binary config on stdin, adds `flags` and execs the real
 * workerd with the same arguments — and returns its path (for `MINIFLARE_WORKERD_PATH`).
 */
export function workerdWithV8Flags(dir: string, realWorkerd: string, flags: string[]): string {
  const root = path.resolve(import.meta.dirname, '..', '..')
  const file = path.join(dir, 'workerd')
  const patcher = path.join(root, 'bench', 'lib', 'workerd-v8-flags.ts')
  const tsx = path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs')
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      '# generated by bench/lib/workerd-v8-flags.ts: workerd with V8 flags added to its binary config (stdin)',
      'set -e',
      'cfg=$(mktemp)',
      `${q(process.execPath)} ${q(tsx)} ${q(patcher)} ${flags.map(q).join(' ')} > "$cfg"`,
      'exec 0<"$cfg"',
      'rm -f "$cfg"',
      `exec ${q(realWorkerd)} "$@"`,
      '',
    ].join('\n'),
  )
  chmodSync(file, 0o755)
  return file
}

// As a program: stdin = the message, arguments = the flags, stdout = the message with them.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const chunks: Buffer[] = []
  process.stdin.on('data', (c: Buffer) => chunks.push(c))
  process.stdin.on('end', () => {
    process.stdout.write(addV8Flags(Buffer.concat(chunks), process.argv.slice(2)))
  })
}
