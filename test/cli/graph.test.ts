/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { run } from '../../src/cli/main'
import { literalRows } from '../../src/cli/commands/graph'
import { envelope, FakeServer, startFakeServer, testIO } from './fake-server'

const TOKEN_ID = '5b7e1c2d-3a4f-4e6b-9c8d-7e6f5a4b3c2d'
const TOKEN_KEY = 'graph-cli-test-key'

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
})
afterEach(() => srv.close())
const env = () => ({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })

const node = (i: number, kind = 'User') => ({
  label: `USER${i}@CORP.LOCAL`,
  kind,
  kinds: ['Base', kind],
  objectId: `S-1-5-21-1-${1000 + i}`,
  isTierZero: i === 0,
  isOwnedObject: false,
  lastSeen: '2026-11-01T00:00:00Z',
})

/** n nodes, each but the first a member of the one before. */
function chain(n: number) {
  const nodes = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i + 1), node(i)]))
  const edges = Array.from({ length: n - 1 }, (_, i) => ({ source: String(i + 2), target: String(i + 1), label: 'MemberOf', kind: 'MemberOf', lastSeen: '2026-11-01T00:00:00Z' }))
  return { nodes, edges }
}

function cypherReplies(answer: (query: string) => { status?: number; json: unknown }) {
  srv.on('POST', '/api/v2/graphs/cypher', (req) => answer(JSON.parse(req.body.toString()).query))
}

const sentQueries = () => srv.to('POST', '/api/v2/graphs/cypher').map((r) => JSON.parse(r.body.toString()).query as string)

describe('edgehound cypher', () => {
  it('prints nodes and relationships as tables (names, kinds, object ids)', async () => {
    cypherReplies(() => ({ json: { data: { ...chain(3), literals: [] } } }))
    const io = await testIO(env())
    expect(await run(['cypher', 'MATCH p=(:User)-[:MemberOf]->() RETURN p'], io)).toBe(0)
    const out = io.out()
    expect(out).toContain('Nodes (3)')
    expect(out).toMatch(/^NAME\s+KIND\s+OBJECTID\s+TIER_ZERO$/m)
    expect(out).toMatch(/^USER0@CORP\.LOCAL\s+User\s+S-1-5-21-1-1000\s+yes$/m)
    expect(out).toContain('Relationships (2)')
    expect(out).toMatch(/^USER1@CORP\.LOCAL\s+MemberOf\s+USER0@CORP\.LOCAL$/m)
    expect(io.err()).toBe('')
    expect(sentQueries()).toEqual(['MATCH p=(:User)-[:MemberOf]->() RETURN p'])
    expect(srv.requests.at(-1)!.principal).toBe(TOKEN_ID)
  })

  it('scalar columns become a table with one line per row', async () => {
    const literals = [
      { key: 'name', value: 'A' },
      { key: 'n', value: 1 },
      { key: 'name', value: 'B' },
      { key: 'n', value: 2 },
    ]
    expect(literalRows(literals)).toEqual({ columns: ['name', 'n'], rows: [{ name: 'A', n: 1 }, { name: 'B', n: 2 }] })
    cypherReplies(() => ({ json: { data: { nodes: {}, edges: [], literals } } }))
    const io = await testIO(env())
    expect(await run(['cypher', 'MATCH (u:User) RETURN u.name AS name, 1 AS n'], io)).toBe(0)
    expect(io.out()).toMatch(/Rows \(2\)\nNAME\s+N\nA\s+1\nB\s+2\n/)
  })

  it('--json prints the whole answer, uncut, and nothing else on stdout', async () => {
    const answer = { ...chain(120), literals: [] }
    cypherReplies(() => ({ json: { data: answer } }))
    const io = await testIO(env())
    expect(await run(['cypher', '--json', 'MATCH (n) RETURN n'], io)).toBe(0)
    expect(JSON.parse(io.out())).toEqual(answer)
    expect(io.err()).toBe('')
  })

  it('a long answer is cut at 50 rows with a note on stderr saying how many were left out and how to see them', async () => {
    cypherReplies(() => ({ json: { data: { ...chain(120), literals: [] } } }))
    const io = await testIO(env())
    expect(await run(['cypher', 'MATCH p=()-[]->() RETURN p'], io)).toBe(0)
    const nodeLines = io.out().split('Relationships')[0].split('\n').filter((l) => l.startsWith('USER'))
    expect(nodeLines).toHaveLength(50)
    expect(io.err()).toContain('note: 70 of 120 nodes not shown; pass --all (or --limit N) to show them, or --json for the whole answer')
    expect(io.err()).toContain('note: 69 of 119 relationships not shown')
    // --limit and --all
    const io2 = await testIO(env())
    expect(await run(['cypher', '--limit', '5', 'MATCH p=()-[]->() RETURN p'], io2)).toBe(0)
    expect(io2.err()).toContain('note: 115 of 120 nodes not shown')
    const io3 = await testIO(env())
    expect(await run(['cypher', '--all', 'MATCH p=()-[]->() RETURN p'], io3)).toBe(0)
    expect(io3.out().split('\n').filter((l) => l.startsWith('USER'))).toHaveLength(120 + 119)
    expect(io3.err()).toBe('')
  })

  it('reads the query from standard input (-, -f -) and from a file (-f FILE)', async () => {
    cypherReplies(() => ({ json: { data: { ...chain(1), literals: [] } } }))
    expect(await run(['cypher', '-'], await testIO(env(), { stdin: 'MATCH (n:User)\nRETURN n\n' }))).toBe(0)
    expect(await run(['cypher', '-f', '-'], await testIO(env(), { stdin: 'MATCH (n:Group) RETURN n' }))).toBe(0)
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'q.cypher'), 'MATCH (n:Computer) RETURN n\n')
    expect(await run(['cypher', '-f', 'q.cypher'], io)).toBe(0)
    expect(sentQueries()).toEqual(['MATCH (n:User)\nRETURN n', 'MATCH (n:Group) RETURN n', 'MATCH (n:Computer) RETURN n'])
  })

  it('a missing file, an empty query or two query sources are refused before anything is sent', async () => {
    const io = await testIO(env())
    expect(await run(['cypher', '-f', 'nope.cypher'], io)).toBe(1)
    expect(io.err()).toContain('cannot read nope.cypher')
    const io2 = await testIO(env(), { stdin: '  \n' })
    expect(await run(['cypher', '-'], io2)).toBe(2)
    expect(io2.err()).toContain('the query is empty')
    const io3 = await testIO(env())
    expect(await run(['cypher', 'MATCH (n) RETURN n', '--saved', 'x'], io3)).toBe(2)
    expect(await run(['cypher'], await testIO(env()))).toBe(2)
    expect(sentQueries()).toEqual([])
  })

  it('a failing query prints the envelope message and request id and exits 1 (--json: the envelope on stderr)', async () => {
    cypherReplies(() => ({ status: 400, json: envelope(400, 'syntax error at line 1, column 7: expected a pattern', 'query') }))
    const io = await testIO(env())
    expect(await run(['cypher', 'MATCH RETURN'], io)).toBe(1)
    expect(io.out()).toBe('')
    expect(io.err()).toContain('error: syntax error at line 1, column 7: expected a pattern [query]')
    expect(io.err()).toContain('request id 00000000-0000-4000-8000-000000000000')
    const io2 = await testIO(env())
    expect(await run(['cypher', '--json', 'MATCH RETURN'], io2)).toBe(1)
    expect(io2.out()).toBe('')
    expect(JSON.parse(io2.err()).errors[0].message).toContain('syntax error')
  })

  it("nothing found (the API's 404 resource not found) prints No results. and exits 0", async () => {
    cypherReplies(() => ({ status: 404, json: envelope(404, 'resource not found', 'query') }))
    const io = await testIO(env())
    expect(await run(['cypher', 'MATCH (n:Nothing) RETURN n'], io)).toBe(0)
    expect(io.out()).toBe('No results.\n')
    const io2 = await testIO(env())
    expect(await run(['cypher', '--json', 'MATCH (n:Nothing) RETURN n'], io2)).toBe(0)
    expect(JSON.parse(io2.out())).toEqual({ nodes: {}, edges: [], literals: [] })
  })

  describe('saved queries', () => {
    const saved: { id: number; name: string; query: string; scope: string }[] = []
    beforeEach(() => {
      saved.length = 0
      srv.on('POST', '/api/v2/saved-queries', (req) => {
        const b = JSON.parse(req.body.toString())
        if (saved.some((q) => q.name === b.name && q.scope === 'owned')) return { status: 400, json: envelope(400, 'duplicate name for saved query: please choose a different name', 'body.name') }
        const q = { id: saved.length + 1, name: b.name, query: b.query, scope: 'owned' }
        saved.push(q)
        return { status: 201, json: { data: q } }
      })
      srv.on('GET', '/api/v2/saved-queries', (req) => {
        const name = req.query.get('name')?.replace(/^eq:/, '')
        const data = saved.filter((q) => q.name === name)
        return { json: { count: data.length, skip: 0, limit: 10000, data } }
      })
      cypherReplies(() => ({ json: { data: { ...chain(2), literals: [] } } }))
    })

    it('--save NAME saves a query after it ran; --saved NAME runs it again', async () => {
      const io = await testIO(env())
      expect(await run(['cypher', '--save', 'Kerberoastable users', 'MATCH (u:User {hasspn: true}) RETURN u'], io)).toBe(0)
      expect(io.out()).toContain('Nodes (2)')
      expect(io.err()).toContain('saved as "Kerberoastable users" (id 1)')
      expect(saved).toEqual([{ id: 1, name: 'Kerberoastable users', query: 'MATCH (u:User {hasspn: true}) RETURN u', scope: 'owned' }])

      const io2 = await testIO(env())
      expect(await run(['cypher', '--saved', 'Kerberoastable users'], io2)).toBe(0)
      const list = srv.to('GET', '/api/v2/saved-queries').at(-1)!
      expect(list.query.get('name')).toBe('eq:Kerberoastable users')
      expect(list.query.get('scope')).toBe('all')
      expect(sentQueries()).toEqual(['MATCH (u:User {hasspn: true}) RETURN u', 'MATCH (u:User {hasspn: true}) RETURN u'])
      expect(io2.out()).toContain('Nodes (2)')
    })

    it('a failing query is not saved; a name in use prints the envelope message and exits 1', async () => {
      // a server on which the query fails (the shared one answers every query)
      const failing = new FakeServer()
      failing.tokens.set(TOKEN_ID, TOKEN_KEY)
      failing.on('POST', '/api/v2/graphs/cypher', () => ({ status: 400, json: envelope(400, 'unknown function foo', 'query') }))
      await failing.start()
      try {
        const io = await testIO({ ...env(), EDGEHOUND_URL: failing.url })
        expect(await run(['cypher', '--save', 'broken', 'RETURN foo()'], io)).toBe(1)
        expect(io.err()).toContain('error: unknown function foo [query]')
        expect(failing.to('POST', '/api/v2/saved-queries')).toEqual([])
      } finally {
        await failing.close()
      }
      saved.push({ id: 7, name: 'mine', query: 'RETURN 1', scope: 'owned' })
      const io2 = await testIO(env())
      expect(await run(['cypher', '--save', 'mine', 'MATCH (n) RETURN n'], io2)).toBe(1)
      expect(io2.err()).toContain('error: duplicate name for saved query: please choose a different name [body.name]')
    })

    it('--saved with an unknown name fails with a message and exit 1; your own query wins over a shared one', async () => {
      const io = await testIO(env())
      expect(await run(['cypher', '--saved', 'nothing'], io)).toBe(1)
      expect(io.err()).toContain('no saved query named "nothing"')
      expect(sentQueries()).toEqual([])
      saved.push({ id: 3, name: 'dup', query: 'RETURN "public"', scope: 'public' }, { id: 4, name: 'dup', query: 'RETURN "own"', scope: 'owned' })
      expect(await run(['cypher', '--saved', 'dup'], await testIO(env()))).toBe(0)
      expect(sentQueries()).toEqual(['RETURN "own"'])
      saved.splice(1)
      saved.push({ id: 5, name: 'dup', query: 'RETURN "shared"', scope: 'shared' })
      const io3 = await testIO(env())
      expect(await run(['cypher', '--saved', 'dup'], io3)).toBe(1)
      expect(io3.err()).toContain('several saved queries are named "dup" and none is your own: id 5 (shared), id 3 (public)')
    })
  })
})

const item = (i: number, type = 'User') => ({ objectid: `S-1-5-21-1-${1000 + i}`, type, name: `USER${i}@CORP.LOCAL`, distinguishedname: '', system_tags: '' })

describe('edgehound search', () => {
  it('prints a table of matches; asks one more than it shows and says how to get the next ones', async () => {
    srv.on('GET', '/api/v2/search', (req) => {
      const limit = Number(req.query.get('limit'))
      const skip = Number(req.query.get('skip') ?? 0)
      return { json: { data: Array.from({ length: 45 }, (_, i) => item(i)).slice(skip, skip + limit) } }
    })
    const io = await testIO(env())
    expect(await run(['search', 'user', '--type', 'User,Computer'], io)).toBe(0)
    const q = srv.to('GET', '/api/v2/search').at(-1)!.query
    expect(q.get('q')).toBe('user')
    expect(q.getAll('type')).toEqual(['User', 'Computer'])
    expect(q.get('limit')).toBe('21')
    const lines = io.out().trimEnd().split('\n')
    expect(lines[0]).toMatch(/^NAME\s+TYPE\s+OBJECTID$/)
    expect(lines).toHaveLength(21)
    expect(io.err()).toContain('note: more matches than the 20 shown; pass --skip 20 for the next ones')

    const io2 = await testIO(env())
    expect(await run(['search', 'user', '--skip', '40', '--json'], io2)).toBe(0)
    expect(JSON.parse(io2.out()).map((r: { name: string }) => r.name)).toEqual(['USER40@CORP.LOCAL', 'USER41@CORP.LOCAL', 'USER42@CORP.LOCAL', 'USER43@CORP.LOCAL', 'USER44@CORP.LOCAL'])
    expect(io2.err()).toBe('')
  })

  it('no match prints a sentence; a refused search prints the envelope message and exits 1', async () => {
    srv.on('GET', '/api/v2/search', (req) =>
      req.query.get('q') === 'x'.repeat(300) ? { status: 400, json: envelope(400, 'q must be at most 256 characters', 'query.q') } : { json: { data: [] } },
    )
    const io = await testIO(env())
    expect(await run(['search', 'nobody'], io)).toBe(0)
    expect(io.out()).toBe('No objects match "nobody".\n')
    const io2 = await testIO(env())
    expect(await run(['search', 'x'.repeat(300)], io2)).toBe(1)
    expect(io2.err()).toContain('error: q must be at most 256 characters [query.q]')
  })
})

describe('edgehound path', () => {
  beforeEach(() => {
    const objects = [
      { objectid: 'S-1-5-21-1-1105', type: 'User', name: 'ALICE@CORP.LOCAL', distinguishedname: '', system_tags: '' },
      { objectid: 'S-1-5-21-1-512', type: 'Group', name: 'DOMAIN ADMINS@CORP.LOCAL', distinguishedname: '', system_tags: 'admin_tier_0' },
      { objectid: 'S-1-5-21-2-512', type: 'Group', name: 'DOMAIN ADMINS@CORP.LOCAL2', distinguishedname: '', system_tags: '' },
      { objectid: 'S-1-5-21-3-1', type: 'User', name: 'TWIN', distinguishedname: '', system_tags: '' },
      { objectid: 'S-1-5-21-3-2', type: 'Computer', name: 'TWIN', distinguishedname: '', system_tags: '' },
    ]
    srv.on('GET', '/api/v2/search', (req) => {
      const q = req.query.get('q')!.toLowerCase()
      return { json: { data: objects.filter((o) => o.name.toLowerCase().includes(q) || o.objectid.toLowerCase() === q) } }
    })
    srv.on('GET', '/api/v2/graphs/shortest-path', (req) =>
      req.query.get('start_node') === 'S-1-5-21-1-1105' && req.query.get('end_node') === 'S-1-5-21-1-512'
        ? {
            json: {
              data: {
                nodes: {
                  '1': { ...node(1), label: 'ALICE@CORP.LOCAL', objectId: 'S-1-5-21-1-1105' },
                  '2': { ...node(2, 'Group'), label: 'IT@CORP.LOCAL', objectId: 'S-1-5-21-1-1200' },
                  '3': { ...node(3, 'Group'), label: 'DOMAIN ADMINS@CORP.LOCAL', objectId: 'S-1-5-21-1-512' },
                },
                edges: [
                  { source: '1', target: '2', label: 'MemberOf', kind: 'MemberOf', lastSeen: '' },
                  { source: '2', target: '3', label: 'GenericAll', kind: 'GenericAll', lastSeen: '' },
                ],
              },
            },
          }
        : { status: 404, json: envelope(404, 'Path not found', 'query') },
    )
  })

  it('resolves names (any case) and object ids as the search does, then prints the relationships', async () => {
    const io = await testIO(env())
    expect(await run(['path', 'alice@corp.local', 'S-1-5-21-1-512', '--kinds', 'nin:HasSession'], io)).toBe(0)
    const q = srv.to('GET', '/api/v2/graphs/shortest-path').at(-1)!.query
    expect([q.get('start_node'), q.get('end_node'), q.get('relationship_kinds')]).toEqual(['S-1-5-21-1-1105', 'S-1-5-21-1-512', 'nin:HasSession'])
    expect(io.out()).toContain('From ALICE@CORP.LOCAL (User, S-1-5-21-1-1105)')
    expect(io.out()).toMatch(/^ALICE@CORP\.LOCAL\s+MemberOf\s+IT@CORP\.LOCAL$/m)
    expect(io.out()).toMatch(/^IT@CORP\.LOCAL\s+GenericAll\s+DOMAIN ADMINS@CORP\.LOCAL$/m)
    const io2 = await testIO(env())
    expect(await run(['path', 'ALICE@CORP.LOCAL', 'domain admins@corp.local', '--json'], io2)).toBe(0)
    const j = JSON.parse(io2.out())
    expect(j.start.objectid).toBe('S-1-5-21-1-1105')
    expect(j.end.objectid).toBe('S-1-5-21-1-512')
    expect(j.edges).toHaveLength(2)
    // a long path is cut like every table, with the note on stderr (stdout stays the table alone in a pipe)
    const io3 = await testIO(env())
    expect(await run(['path', 'ALICE@CORP.LOCAL', 'S-1-5-21-1-512', '--limit', '1'], io3)).toBe(0)
    expect(io3.out()).toMatch(/^ALICE@CORP\.LOCAL\s+MemberOf\s+IT@CORP\.LOCAL$/m)
    expect(io3.out()).not.toContain('GenericAll')
    expect(io3.err()).toContain('note: 1 of 2 relationships not shown; pass --all (or --limit N) to show them, or --json for the whole answer')
  })

  it('an unknown or ambiguous name fails with exit 1 before any path search; no path is said plainly', async () => {
    const io = await testIO(env())
    expect(await run(['path', 'TWIN', 'S-1-5-21-1-512'], io)).toBe(1)
    expect(io.err()).toContain('FROM "TWIN" names 2 objects: TWIN (User, S-1-5-21-3-1); TWIN (Computer, S-1-5-21-3-2); give the object id instead')
    const io2 = await testIO(env())
    expect(await run(['path', 'ALICE@CORP.LOCAL', 'DOMAIN ADMINS'], io2)).toBe(1)
    expect(io2.err()).toContain('no object has the name or object id "DOMAIN ADMINS" (TO); did you mean DOMAIN ADMINS@CORP.LOCAL (Group, S-1-5-21-1-512)')
    expect(srv.to('GET', '/api/v2/graphs/shortest-path')).toEqual([])
    const io3 = await testIO(env())
    expect(await run(['path', 'S-1-5-21-3-1', 'S-1-5-21-1-512'], io3)).toBe(0)
    expect(io3.out()).toBe('No path from TWIN (User, S-1-5-21-3-1) to DOMAIN ADMINS@CORP.LOCAL (Group, S-1-5-21-1-512).\n')
  })
})
