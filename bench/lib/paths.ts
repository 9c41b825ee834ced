/**
 * Pair selection and answer checking for the shortest-path benchmark (pure: no I/O).
 */
import { prng, type Csr, type GenGraph } from './generate'
import type { ShortestPathGraph } from './api'

export function bfsDistances(csr: Csr, s: number, dist: Int32Array, queue: Int32Array): number {
  dist.fill(-1)
  let head = 0, tail = 0
  queue[tail++] = s
  dist[s] = 0
  while (head < tail) {
    const u = queue[head++]
    for (let j = csr.offsets[u], end = csr.offsets[u + 1]; j < end; j++) {
      const v = csr.targets[j]
      if (dist[v] === -1) {
        dist[v] = dist[u] + 1
        queue[tail++] = v
      }
    }
  }
  return tail
}

/** Random connected pairs (distance ≥ 2 when possible) and unreachable pairs, deterministic for a graph. */
export function choosePairs(g: GenGraph, csr: Csr, connected: number, unreachable: number): { reach: [number, number][]; unreach: [number, number][] } {
  const rnd = prng(g.seed * 31 + g.edgeCount)
  const n = g.nodes.length
  const dist = new Int32Array(n)
  const queue = new Int32Array(n)
  const reach: [number, number][] = []
  const unreach: [number, number][] = []
  let guard = 0
  while ((reach.length < connected || unreach.length < unreachable) && guard++ < (connected + unreachable) * 50) {
    const s = Math.floor(rnd() * n)
    if (csr.offsets[s + 1] === csr.offsets[s]) continue
    const reached = bfsDistances(csr, s, dist, queue)
    if (reach.length < connected && reached > 1) {
      // prefer a far target: pick among reached nodes at distance ≥ 2, else any reached one
      const far: number[] = []
      for (let i = 1; i < reached; i++) if (dist[queue[i]] >= 2) far.push(queue[i])
      const pool = far.length > 0 ? far : Array.from(queue.subarray(1, reached))
      reach.push([s, pool[Math.floor(rnd() * pool.length)]])
    }
    if (unreach.length < unreachable && reached < n) {
      for (let tries = 0; tries < 200; tries++) {
        const t = Math.floor(rnd() * n)
        if (dist[t] === -1 && t !== s) {
          unreach.push([s, t])
          break
        }
      }
    }
  }
  return { reach, unreach }
}

/**
 * The service answers the union of ALL shortest paths (BloodHound's allShortestPaths), so its edge count is
 * not the hop count: the length is the BFS distance from start to end inside the returned subgraph.
 * -1 when the answer does not connect them.
 */
export function pathLength(body: ShortestPathGraph | null, startObjectId: string, endObjectId: string): number {
  const nodes = body?.data?.nodes ?? {}
  const key = (oid: string) => Object.keys(nodes).find((k) => String((nodes[k] as { objectId?: string }).objectId ?? '').toUpperCase() === oid.toUpperCase())
  const s = key(startObjectId)
  const t = key(endObjectId)
  if (s === undefined || t === undefined) return -1
  const adj = new Map<string, string[]>()
  for (const e of body?.data?.edges ?? []) adj.set(e.source, [...(adj.get(e.source) ?? []), e.target])
  const dist = new Map<string, number>([[s, 0]])
  const queue = [s]
  while (queue.length) {
    const u = queue.shift()!
    if (u === t) return dist.get(u)!
    for (const v of adj.get(u) ?? []) if (!dist.has(v)) (dist.set(v, dist.get(u)! + 1), queue.push(v))
  }
  return -1
}
