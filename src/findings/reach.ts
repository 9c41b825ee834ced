/**
 * "How many principals of environment E can reach X?" for many X at once, over the traversable edges.
 *
 * The naive way is one reverse breadth-first search per X: O(items × (V + E)), far too slow at 1 M edges
 * and thousands of items. Instead, work is shared twice:
 *
 *  1. Strongly connected components (iterative Tarjan, O(V + E), no recursion so 100 k-node chains cannot
 *     overflow the stack). Every node of a component reaches exactly what the others reach, and Tarjan emits
 *     components in reverse topological order: when component c is emitted, every component it has an edge
 *     to was emitted before it. Component numbers therefore satisfy `comp[w] < comp[v]` for every edge v→w
 *     that leaves a component.
 *  2. Bit-parallel propagation: items are processed in batches of 32·W (W 32-bit words per component). Each
 *     item sets its bit on the components of its seed nodes; one pass over the components in emission order
 *     ORs every successor's words into the component (successors are already final). Afterwards bit i of
 *     component c says "c can reach a seed of item i". One batch costs O(C + E'·W) word operations, where E'
 *     is the number of edges between components.
 *  3. Counting: per environment in the batch, its principals' words are ANDed with the mask of the batch's
 *     items of that environment and the set bits are counted.
 *
 * An item with several seeds (e.g. "every source of T0GenericAll in E") gets "can reach ANY seed" for free.
 * A seed that is itself a principal of the item's environment counts (a path of length zero).
 */

export interface Adjacency {
  nodeCount: number
  /** CSR: successors of v are targets[offsets[v] .. offsets[v+1]) */
  offsets: Int32Array
  targets: Int32Array
}

export interface Components {
  count: number
  /** component per node, numbered in emission (reverse topological) order */
  comp: Int32Array
  /** CSR over components: edges leaving each component (targets are component numbers, all smaller) */
  offsets: Int32Array
  targets: Int32Array
}

export function stronglyConnectedComponents(g: Adjacency): Components {
  const n = g.nodeCount
  const { offsets, targets } = g
  const index = new Int32Array(n).fill(-1)
  const low = new Int32Array(n)
  const onStack = new Uint8Array(n)
  const stack = new Int32Array(n)
  const callNode = new Int32Array(n)
  const callEdge = new Int32Array(n)
  const comp = new Int32Array(n)
  let sp = 0
  let next = 0
  let count = 0
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue
    let csp = 0
    index[root] = low[root] = next++
    stack[sp++] = root
    onStack[root] = 1
    callNode[csp] = root
    callEdge[csp] = offsets[root]
    csp++
    while (csp > 0) {
      const v = callNode[csp - 1]
      const e = callEdge[csp - 1]
      if (e < offsets[v + 1]) {
        callEdge[csp - 1] = e + 1
        const w = targets[e]
        if (index[w] === -1) {
          index[w] = low[w] = next++
          stack[sp++] = w
          onStack[w] = 1
          callNode[csp] = w
          callEdge[csp] = offsets[w]
          csp++
        } else if (onStack[w] && index[w] < low[v]) {
          low[v] = index[w]
        }
      } else {
        csp--
        if (low[v] === index[v]) {
          let x: number
          do {
            x = stack[--sp]
            onStack[x] = 0
            comp[x] = count
          } while (x !== v)
          count++
        }
        if (csp > 0) {
          const u = callNode[csp - 1]
          if (low[v] < low[u]) low[u] = low[v]
        }
      }
    }
  }
  // Edges between components, grouped by source component.
  const cOff = new Int32Array(count + 1)
  for (let v = 0; v < n; v++) {
    const cv = comp[v]
    for (let e = offsets[v]; e < offsets[v + 1]; e++) if (comp[targets[e]] !== cv) cOff[cv + 1]++
  }
  for (let c = 0; c < count; c++) cOff[c + 1] += cOff[c]
  const fill = cOff.slice(0, count)
  const cTgt = new Int32Array(cOff[count])
  for (let v = 0; v < n; v++) {
    const cv = comp[v]
    for (let e = offsets[v]; e < offsets[v + 1]; e++) {
      const cw = comp[targets[e]]
      if (cw !== cv) cTgt[fill[cv]++] = cw
    }
  }
  return { count, comp, offsets: cOff, targets: cTgt }
}

export interface ReachItem {
  /** node indexes; the item asks who can reach any of them */
  seeds: ArrayLike<number>
  /** environment index whose principals are counted */
  env: number
}

/**
 * For every item, the number of principals of `item.env` that can reach one of its seeds.
 * `principalsByEnv[e]` lists the node indexes of environment e's principals.
 */
export function countReaching(comps: Components, principalsByEnv: ArrayLike<number>[], items: ReachItem[], maxWords = 8): Int32Array {
  return drain(countReachingSteps(comps, principalsByEnv, items, maxWords))
}

/** Runs a step generator to its end without pausing. */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/**
 * The same, as steps: yields after every batch, so that a caller running inside a Durable Object can give
 * the event loop a turn between batches (requests to the object are not held up for the whole computation).
 */
export function* countReachingSteps(comps: Components, principalsByEnv: ArrayLike<number>[], items: ReachItem[], maxWords = 8): Generator<void, Int32Array> {
  const counts = new Int32Array(items.length)
  if (items.length === 0) return counts
  const C = comps.count
  const { comp } = comps
  const cOff = comps.offsets
  const cTgt = comps.targets
  const W = Math.max(1, Math.min(maxWords, Math.ceil(items.length / 32)))
  const B = 32 * W
  const masks = new Int32Array(C * W)
  for (let start = 0; start < items.length; start += B) {
    const end = Math.min(items.length, start + B)
    masks.fill(0)
    const envMasks = new Map<number, Int32Array>()
    for (let i = start; i < end; i++) {
      const b = i - start
      const word = b >>> 5
      const bit = 1 << (b & 31)
      const it = items[i]
      for (let s = 0; s < it.seeds.length; s++) masks[comp[it.seeds[s]] * W + word] |= bit
      let em = envMasks.get(it.env)
      if (!em) envMasks.set(it.env, (em = new Int32Array(W)))
      em[word] |= bit
    }
    // Propagate: successors have smaller component numbers, so they are final when c is reached.
    if (W === 1) {
      for (let c = 0; c < C; c++) {
        let m = masks[c]
        for (let e = cOff[c]; e < cOff[c + 1]; e++) m |= masks[cTgt[e]]
        masks[c] = m
      }
    } else {
      for (let c = 0; c < C; c++) {
        const base = c * W
        for (let e = cOff[c]; e < cOff[c + 1]; e++) {
          const t = cTgt[e] * W
          for (let k = 0; k < W; k++) masks[base + k] |= masks[t + k]
        }
      }
    }
    for (const [env, em] of envMasks) {
      const principals = principalsByEnv[env]
      if (!principals) continue
      for (let p = 0; p < principals.length; p++) {
        const base = comp[principals[p]] * W
        for (let k = 0; k < W; k++) {
          let m = masks[base + k] & em[k]
          while (m !== 0) {
            const lowBit = m & -m
            counts[start + k * 32 + (31 - Math.clz32(lowBit))]++
            m ^= lowBit
          }
        }
      }
    }
    yield
  }
  return counts
}
