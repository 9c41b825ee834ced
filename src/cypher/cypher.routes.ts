/**
 * POST /api/v2/graphs/cypher: BloodHound's Cypher endpoint (cmd/api/src/api/v2/cypherquery.go).
 * HTTP only: parse → run (against the caller's visible graph) → measure the answer → stream it. Every refusal and every
 * budget stop is a 400 with the engine's message; nothing found is BloodHound's 404.
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { accessParam } from '../graph/graph.store'
import { d1GraphSource } from './cypher.store'
import { CypherError, MESSAGES, parseCypher } from './parse'
import { loadReferenced, runQuery } from './run'
import { Budget, ISOLATE_POOL, QUERY_LIMITS } from './budget'
import { nodeReads } from './needs'
import { answerPieces, answerStream, CypherResultSchema, measureAnswer } from './present'
import { AnswerBudget, ANSWER_LIMITS } from './answer'
import { cypherComputeMs, WEIGHT } from '../ratelimit/cost'
import { savedQueryRoutes } from './saved-queries.routes'

const CypherQuerySchema = z
  .object({
    // BloodHound decodes a missing query as "" and answers it as an empty one (400 `invalid input`)
    query: z.string({ error: 'query must be a string' }).optional().default(''),
    include_properties: z.boolean().optional().default(false),
  })
  .meta({ id: 'CypherQuery' })

export const cypherRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/graphs/cypher',
      operationId: 'RunCypherQuery',
      audit: { exempt: 'read-only: updating clauses are refused, nothing changes' },
      // the same signed query may be sent again within its validity, like a GET (src/auth/request-date.ts)
      readOnly: true,
      // a search bounded by the budgets (budget.ts), then charged what it used: time plus estimated computation
      cost: WEIGHT.cypher,
      summary: 'Run a read-only Cypher query against the graph',
      description:
        'BloodHound-compatible. The supported subset, budgets and refusals are listed in docs/cypher.md. Only the ' +
        'environments the caller may access are seen or traversed. Scalar columns are returned as `literals`; ' +
        '`node_keys`, `edge_keys` and `properties` only with `include_properties`. Refused with 400: queries that do not parse ' +
        '(`line L:C ...`), an empty query (`invalid input`), parameters, procedure calls, updating clauses, and ' +
        'queries over their row, traversal-step, time or memory budget (the memory budget is also shared by the queries running at the same time), ' +
        `and queries whose answer would pass ${ANSWER_LIMITS.maxBytes / 1024 / 1024} MiB serialised, ${ANSWER_LIMITS.maxEntries} nodes, edges and literals, or ${ANSWER_LIMITS.maxDepth} levels of nested lists and maps. ` +
        'Every refusal names the limit and its value. The answer is streamed; every limit is decided before its first byte is sent. ' +
        'Nothing found: 404 `resource not found`. ' +
        'The response header `X-Cypher-Plan` summarises how the patterns were matched.',
      tags: ['Cypher'],
      auth: 'graph/Read',
      replay: { repeatable: 'a read-only query: it changes nothing' },
      body: { kind: 'json', schema: CypherQuerySchema, maxBytes: 256 * 1024 },
      responses: { 200: { description: 'the nodes, edges and literals the query returned', schema: z.object({ data: CypherResultSchema }) } },
    },
    async (c, { body }) => {
      // What the query used, for the rate limit's charge when the request ends (ratelimit/cost.ts
      // cypherComputeMs): taken however the query ends, since a refused query has done its work too.
      let used = { values: 0, answerBytes: 0 }
      // The query's bytes also count against the isolate's pool (budget.ts ISOLATE_POOL) until its answer
      // is written or it fails, so concurrent queries cannot together pass the isolate's memory. The graph
      // data it read stays held while the answer streams: the budget ends with the stream, not with this
      // handler.
      const budget = new Budget(QUERY_LIMITS, Date.now, ISOLATE_POOL)
      let streaming = false
      try {
        const query = parseCypher(body.query)
        // only the node properties the query can read or the answer presents, when it never needs a whole node (needs.ts)
        const reads = nodeReads(query, body.include_properties)
        const nodeKeys = reads.keys
        const source = d1GraphSource(c.env.DB, accessParam(c.var.principal.environmentAccess), { nodeKeys, presented: reads.presented })
        // The answer is bounded by itself (answer.ts): per returned row as the rows arrive, then exactly
        // by the measuring pass, all before the first byte is sent (a streamed answer cannot change its
        // status once it started), so writing it cannot fail.
        const rowsAnswer = new AnswerBudget()
        const answer = new AnswerBudget()
        let result, measured
        try {
          result = await runQuery(query, source, { now: c.var.now().getTime(), budget, answer: rowsAnswer })
          await loadReferenced(result)
          measured = measureAnswer(result.columns, result.rows, result.ctx.graph, body.include_properties, answer)
        } finally {
          used = { values: budget.used.values, answerBytes: Math.max(rowsAnswer.used.bytes, answer.used.bytes) }
        }
        const spent = result.ctx.budget.used
        // Printable ASCII only (the plan quotes query literals; a header cannot carry anything else).
        c.header(
          'X-Cypher-Plan',
          planHeader(
            result.ctx.plans,
            `rows ${spent.rows}, steps ${spent.steps}, bytes ${spent.bytes}, relationship properties ${result.ctx.relProperties ? 'read' : 'not read'}, node properties ${nodeKeys === null ? 'all' : nodeKeys.length ? planKeys(nodeKeys) : 'none'}${reads.presented ? ' and the presented ones' : ''}`,
          ),
        )
        if (measured.entries === 0) throw new ApiError(404, 'resource not found', 'query')
        c.header('Content-Type', 'application/json')
        const pieces = answerPieces(result.columns, result.rows, result.ctx.graph, body.include_properties, measured)
        streaming = true
        return c.body(answerStream(pieces, () => budget.end()), 200)
      } catch (e) {
        if (e instanceof CypherError) {
          // a query stopped while it ran (a limit): the plan so far and what it had spent, to tell why
          const spent = budget.used
          const headers: Record<string, string> = e.plans ? { 'X-Cypher-Plan': planHeader(e.plans, `stopped; rows ${spent.rows}, steps ${spent.steps}, bytes ${spent.bytes}`) } : {}
          throw new ApiError(400, e.message, 'query', headers)
        }
        // The last line of defence for "never a 5xx": a value nested deeper than the stack allows (parse.ts
        // bounds the syntax tree's depth, but a chain of WITH clauses can still nest lists in lists) or
        // longer than V8 allows is refused as too complex, like a tree the parser cannot build.
        if (e instanceof RangeError) throw new ApiError(400, MESSAGES.tooComplex, 'query')
        throw e
      } finally {
        if (!streaming) budget.end()
        c.set('unclockedMs', cypherComputeMs(used))
      }
    },
  ),
  ...savedQueryRoutes,
]

/** The X-Cypher-Plan header: the plans made and what was spent, printable ASCII only (the plans quote query literals). */
function planHeader(plans: string[], spent: string): string {
  return `${plans.join(' | ').slice(0, 1500)} (${spent})`.replace(/[^\x20-\x7e]/g, '?')
}

/**
 * The node-property list of the plan header, shortened: a legal query may read hundreds of keys, and a
 * header of tens of KB is refused by proxies with 8–16 KB header buffers. The header is for tests and
 * tuning, so the first 20 keys and the count say enough.
 */
export function planKeys(keys: string[]): string {
  return keys.length <= 20 ? keys.join(',') : `${keys.slice(0, 20).join(',')},... (${keys.length} keys)`
}

