/// <reference types="node" />
/**
 * The graph commands people type every day: `cypher`, `search` and `path`. Text tables by default (long
 * tables cut at --limit rows with a note on stderr saying how many rows were left out and how to see them),
 * the API's answer with --json (whole, never cut). Everything goes through the typed client (src/client).
 */
import { readFile } from 'node:fs/promises'
import { EdgeHoundError, type EdgeHoundClient } from '../../client'
import { createSavedQuery, cypherQuery, savedQueriesNamed, type CypherResultJson } from '../../client/cypher'
import { resolveNode, search, shortestPath, type PathGraphJson, type SearchResultJson } from '../../client/graph'
import type { Command, Context } from '../command'
import { CliError, UsageError } from '../errors'

type Opts = Record<string, string | boolean | string[] | undefined>

const DEFAULT_ROWS = 50

const LIMIT_OPTIONS = {
  limit: { type: 'string', short: 'n', value: 'N', description: `rows shown per table (default ${DEFAULT_ROWS}); the rest is counted in a note` },
  all: { type: 'boolean', description: 'show every row' },
} as const

/** --limit / --all → rows per table (Infinity: all). */
export function rowLimit(opts: Opts, fallback = DEFAULT_ROWS): number {
  if (opts.all) return Infinity
  if (opts.limit === undefined) return fallback
  const n = Number(opts.limit)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--limit must be a whole number of at least 1, not "${String(opts.limit)}"`)
  return n
}

/**
 * A titled table cut at `limit` rows. The note about the rows left out goes to stderr, so that stdout stays
 * the table alone (`| wc -l`, `| grep`) and the person still sees that the answer was cut.
 */
function printTable(ctx: Context, title: string, rows: Record<string, unknown>[], columns: string[], limit: number, how = '--all (or --limit N)') {
  ctx.out.line(`${title} (${rows.length})`)
  ctx.out.table(rows.slice(0, limit), columns)
  if (rows.length > limit)
    ctx.out.info(`note: ${rows.length - limit} of ${rows.length} ${title.toLowerCase()} not shown; pass ${how} to show them, or --json for the whole answer`)
}

// ---- cypher -----------------------------------------------------------------------------------------

/** The rows of a Cypher answer's `literals` (one entry per column per row, in row order). */
export function literalRows(literals: CypherResultJson['literals']): { columns: string[]; rows: Record<string, unknown>[] } {
  const columns: string[] = []
  const rows: Record<string, unknown>[] = []
  let row: Record<string, unknown> | null = null
  for (const { key, value } of literals) {
    if (!columns.includes(key)) columns.push(key)
    if (!row || key in row) rows.push((row = {}))
    row[key] = value
  }
  return { columns, rows }
}

function nodeName(nodes: Record<string, { label: string; objectId: string }>, id: string): string {
  const n = nodes[id]
  return n ? n.label || n.objectId : id
}

function printGraph(ctx: Context, g: { nodes: CypherResultJson['nodes']; edges: CypherResultJson['edges'] }, limit: number) {
  const nodes = Object.values(g.nodes).map((n) => ({ name: n.label, kind: n.kind, objectid: n.objectId, tier_zero: n.isTierZero ? 'yes' : '' }))
  if (nodes.length) printTable(ctx, 'Nodes', nodes, ['name', 'kind', 'objectid', 'tier_zero'], limit)
  const edges = g.edges.map((e) => ({ source: nodeName(g.nodes, e.source), kind: e.kind, target: nodeName(g.nodes, e.target) }))
  if (edges.length) {
    if (nodes.length) ctx.out.line()
    printTable(ctx, 'Relationships', edges, ['source', 'kind', 'target'], limit)
  }
}

/** The query text from the argument, `-` (stdin), `-f FILE` (`-f -`: stdin) or `--saved NAME`. */
async function queryText(ctx: Context, c: () => Promise<EdgeHoundClient>, args: string[], opts: Opts): Promise<{ query: string; saved?: string }> {
  const sources = [args.length > 0, opts.file !== undefined, opts.saved !== undefined].filter(Boolean).length
  if (sources !== 1) throw new UsageError('give the query one way: as QUERY, as - (standard input), with -f FILE or with --saved NAME')
  if (opts.saved !== undefined) {
    const name = String(opts.saved)
    const found = await savedQueriesNamed(await c(), name)
    if (found.length === 0) throw new CliError(`no saved query named "${name}" is visible to this caller (edgehound request GET /api/v2/saved-queries?scope=all lists them)`)
    const own = found.filter((q) => q.scope === 'owned' || q.scope === undefined)
    const pick = own.length === 1 ? own[0] : found.length === 1 ? found[0] : undefined
    if (!pick)
      throw new CliError(`several saved queries are named "${name}" and none is your own: ${found.map((q) => `id ${q.id} (${q.scope ?? 'owned'})`).join(', ')}`)
    return { query: pick.query, saved: name }
  }
  let text: string
  if (opts.file !== undefined) {
    const f = String(opts.file)
    if (f === '-') text = new TextDecoder().decode(await ctx.io.readStdin())
    else
      text = await readFile(ctx.resolvePath(f), 'utf8').catch((e: Error) => {
        throw new CliError(`cannot read ${f}: ${e.message}`)
      })
  } else if (args[0] === '-') text = new TextDecoder().decode(await ctx.io.readStdin())
  else text = args[0]
  if (!text.trim()) throw new UsageError('the query is empty')
  return { query: text.trim() }
}

export const cypher: Command = {
  name: 'cypher',
  summary: 'Run a read-only Cypher query and print its nodes, relationships and columns',
  args: '[QUERY | -]',
  description:
    'The query comes from QUERY, from standard input (-), from a file (-f FILE) or from a saved query (--saved NAME:\n' +
    'your own first, then those shared with you and public ones). --save NAME keeps a query that ran as a saved query.\n' +
    'An answer with nothing in it prints "No results." and exits 0. With --json the answer is printed whole.',
  minArgs: 0,
  maxArgs: 1,
  options: {
    file: { type: 'string', short: 'f', value: 'FILE', description: 'read the query from FILE (- for standard input)' },
    saved: { type: 'string', value: 'NAME', description: 'run the saved query with this name' },
    save: { type: 'string', value: 'NAME', description: 'after it ran, save the query under this name' },
    properties: { type: 'boolean', description: 'include node and relationship properties (shown with --json)' },
    ...LIMIT_OPTIONS,
  },
  async run(ctx, args, opts) {
    const limit = rowLimit(opts)
    const save = opts.save === undefined ? undefined : String(opts.save).trim()
    if (save === '') throw new UsageError('--save needs a name')
    let client: EdgeHoundClient | undefined
    const c = async () => (client ??= await ctx.client())
    const { query } = await queryText(ctx, c, args, opts)
    let data: CypherResultJson
    try {
      data = (await cypherQuery(await c(), query, opts.properties === true)).data
    } catch (e) {
      // BloodHound answers a query that found nothing with 404 `resource not found` (context `query`).
      if (!(e instanceof EdgeHoundError && e.status === 404 && e.envelope?.errors?.some((d) => d.context === 'query'))) throw e
      data = { nodes: {}, edges: [], literals: [] }
    }
    if (ctx.json) ctx.out.data(data)
    else {
      const { columns, rows } = literalRows(data.literals)
      const empty = rows.length === 0 && Object.keys(data.nodes).length === 0 && data.edges.length === 0
      if (empty) ctx.out.line('No results.')
      printGraph(ctx, data, limit)
      if (rows.length) {
        if (Object.keys(data.nodes).length || data.edges.length) ctx.out.line()
        printTable(ctx, 'Rows', rows, columns, limit)
      }
    }
    if (save !== undefined) {
      const saved = (await createSavedQuery(await c(), { name: save, query })).data
      ctx.out.info(`saved as "${saved.name}" (id ${saved.id}); run it again with: edgehound cypher --saved ${JSON.stringify(saved.name)}`)
    }
    return 0
  },
}

// ---- search -----------------------------------------------------------------------------------------

const SEARCH_DEFAULT = 20
const SEARCH_MAX = 1000

export const searchCmd: Command = {
  name: 'search',
  summary: 'Find objects by name or object id (exact matches first, then names containing TEXT)',
  args: 'TEXT',
  minArgs: 1,
  maxArgs: 1,
  options: {
    type: { type: 'string', short: 't', multiple: true, value: 'TYPE', description: 'only objects of this kind, e.g. User (comma lists allowed)' },
    limit: { type: 'string', short: 'n', value: 'N', description: `matches shown (default ${SEARCH_DEFAULT}, at most ${SEARCH_MAX})` },
    skip: { type: 'string', value: 'N', description: 'leave out the first N matches (the next page)' },
  },
  async run(ctx, [text], opts) {
    const limit = rowLimit(opts, SEARCH_DEFAULT)
    if (limit > SEARCH_MAX) throw new UsageError(`--limit must be at most ${SEARCH_MAX}`)
    const skip = opts.skip === undefined ? 0 : Number(opts.skip)
    if (!Number.isInteger(skip) || skip < 0) throw new UsageError(`--skip must be a whole number, not "${String(opts.skip)}"`)
    const type = ((opts.type as string[] | undefined) ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean)
    // one more than shown: tells whether there is a next page without a count from the server
    const page = (await search(await ctx.client(), { q: text, type: type.length ? type : undefined, skip: skip || undefined, limit: Math.min(limit + 1, SEARCH_MAX) })).data ?? []
    const more = page.length > limit
    const shown = page.slice(0, limit)
    if (ctx.json) {
      ctx.out.data(shown)
      if (more) ctx.out.info(`note: more matches exist; pass --skip ${skip + limit} for the next ones`)
      return 0
    }
    if (shown.length === 0) {
      ctx.out.line(skip ? `No more matches for "${text}".` : `No objects match "${text}".`)
      return 0
    }
    ctx.out.table(shown as unknown as Record<string, unknown>[], ['name', 'type', 'objectid'])
    if (more)
      ctx.out.info(
        `note: more matches than the ${shown.length} shown; pass --skip ${skip + limit} for the next ones` +
          (limit < SEARCH_MAX ? `, --limit N (up to ${SEARCH_MAX}) for more at once` : '') +
          ', or a longer TEXT or --type to narrow the search',
      )
    return 0
  },
}

// ---- path -------------------------------------------------------------------------------------------

function describe(n: SearchResultJson): string {
  return `${n.name} (${n.type}, ${n.objectid})`
}

/** FROM / TO: an object id or a name, exactly (case-insensitive), as the search matches them. */
async function resolveEnd(c: EdgeHoundClient, which: string, text: string): Promise<SearchResultJson> {
  const { exact, others } = await resolveNode(c, text)
  if (exact.length === 1) return exact[0]
  if (exact.length > 1)
    throw new CliError(`${which} "${text}" names ${exact.length} objects: ${exact.slice(0, 10).map(describe).join('; ')}; give the object id instead`)
  const hint = others.length ? `; did you mean ${others.slice(0, 5).map(describe).join('; ')}?` : ' (edgehound search TEXT finds objects)'
  throw new CliError(`no object has the name or object id "${text}" (${which})${hint}`)
}

export const pathCmd: Command = {
  name: 'path',
  summary: 'Shortest paths between two objects (names or object ids)',
  args: 'FROM TO',
  description:
    'FROM and TO are object ids or exact names (any letter case), resolved with the search; a name shared by\n' +
    'several objects is refused with their object ids. Prints the relationships of all shortest paths.',
  minArgs: 2,
  maxArgs: 2,
  options: {
    kinds: { type: 'string', value: 'in:A,B|nin:A,B', description: 'relationship kinds the paths may cross (in:) or may not (nin:)' },
    ...LIMIT_OPTIONS,
  },
  async run(ctx, [from, to], opts) {
    const limit = rowLimit(opts)
    const c = await ctx.client()
    const start = await resolveEnd(c, 'FROM', from)
    const end = await resolveEnd(c, 'TO', to)
    let graph: PathGraphJson
    try {
      graph = (await shortestPath(c, start.objectid, end.objectid, opts.kinds as string | undefined)).data
    } catch (e) {
      // "Path not found" is an answer, not a failure of the command (exit 0, like an empty search or Cypher answer).
      if (e instanceof EdgeHoundError && e.status === 404 && e.envelope?.errors?.some((d) => d.message === 'Path not found')) {
        if (ctx.json) ctx.out.data({ start, end, nodes: {}, edges: [] })
        else ctx.out.line(`No path from ${describe(start)} to ${describe(end)}.`)
        return 0
      }
      throw e
    }
    if (ctx.json) {
      ctx.out.data({ start, end, ...graph })
      return 0
    }
    ctx.out.line(`From ${describe(start)}`)
    ctx.out.line(`To   ${describe(end)}`)
    ctx.out.line()
    printTable(ctx, 'Relationships', graph.edges.map((e) => ({ source: nodeName(graph.nodes, e.source), kind: e.kind, target: nodeName(graph.nodes, e.target) })), ['source', 'kind', 'target'], limit)
    return 0
  },
}
