/**
 * Finding the elements of an upload that may repeat (the same node id, or the same edge as written),
 * with memory of 4 bytes per element: pass 1 records a 32-bit hash of each element's key; the hashes
 * seen more than once are the candidates. Pass 2 sends candidates to separate staging chunks, which the
 * commit folds into one row per key (src/graph/ingest.store.ts). A hash collision only makes an element
 * a candidate needlessly (folding a key that occurs once changes nothing), so hashes need not be exact.
 *
 * Pure: strings in, numbers out.
 */

/** FNV-1a over the UTF-16 code units of `s`. */
export function keyHash(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** The key of an edge element as written (start, end, kind, and how each end is matched). */
export function edgeKey(e: { s: string; sm: string; sk: string | null; t: string; tm: string; tk: string | null; k: string }): string {
  return `${e.s}\u0000${e.t}\u0000${e.k}\u0000${e.sm}\u0000${e.sk ?? ''}\u0000${e.tm}\u0000${e.tk ?? ''}`
}

/** Collects key hashes; `repeated()` gives the sorted set of those seen at least twice. */
export class KeyHashes {
  private hashes = new Uint32Array(1024)
  private size = 0

  add(key: string): void {
    if (this.size === this.hashes.length) {
      const grown = new Uint32Array(this.hashes.length * 2)
      grown.set(this.hashes)
      this.hashes = grown
    }
    this.hashes[this.size++] = keyHash(key)
  }

  repeated(): RepeatedKeys {
    const sorted = this.hashes.subarray(0, this.size).sort()
    const out: number[] = []
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1] && out[out.length - 1] !== sorted[i]) out.push(sorted[i])
    this.hashes = new Uint32Array(0)
    this.size = 0
    return new RepeatedKeys(Uint32Array.from(out))
  }
}

export class RepeatedKeys {
  constructor(private readonly hashes: Uint32Array) {}

  get empty(): boolean {
    return this.hashes.length === 0
  }

  /** Whether `key` may occur more than once (binary search). */
  has(key: string): boolean {
    if (this.hashes.length === 0) return false
    const h = keyHash(key)
    let lo = 0
    let hi = this.hashes.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const v = this.hashes[mid]
      if (v === h) return true
      if (v < h) lo = mid + 1
      else hi = mid - 1
    }
    return false
  }
}

export const NO_REPEATS = new RepeatedKeys(new Uint32Array(0))
