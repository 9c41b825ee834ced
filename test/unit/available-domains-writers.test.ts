/// <reference types="vite/client" />
/**
 * Every writer of what available-domains' answer is made of, known and accounted for.
 *
 * The answer is cached per isolate and revalidated by a stamp (graph.store.ts environmentsStampStatement,
 * src/graph/environments.ts). The stamp is not a counter that writers bump: it is read from the rows
 * themselves (the latest job, the running jobs' file counts, the count, highest id and unnamed count of
 * environment nodes, environment_collections, the latest complete run, the catalogue version), and it
 * names the answer only because of WHERE those tables are written. A new statement that writes them
 * elsewhere (say a route that renames an environment node, or deletes an environment's data) would leave
 * the stamp unchanged, and available-domains would keep answering the old list until the isolate dies:
 * with AVAILABLE_DOMAINS_FRESH_MS at 0 (as the suites run), nothing else protects it.
 *
 * Why a scan and not only behavioural tests: test/integration/available-domains-cache.test.ts checks that
 * each known writer makes the very next answer current, but a test can only exercise the writers someone
 * knew about; the defect to catch is the writer nobody listed. So this test reads every SQL write in src/
 * (INSERT / REPLACE / UPDATE / DELETE, comments stripped) on the tables the answer reads (found from the
 * answer's own statements, not listed by hand) and requires each one, by file and top-level declaration,
 * to be in WRITERS below with the tables it writes, the reason the stamp sees it (or why it cannot change
 * the answer), the title of the behavioural case that proves it, and, where the reason depends on it, a
 * text that must still be in the function whose batch carries the write. A writer that is not listed, or
 * whose tables changed, fails here with what to do.
 */
import { describe, expect, it } from 'vitest'
import { environmentsStatement } from '../../src/graph/graph.store'
import { impactValuesStatement } from '../../src/findings/impact'
import { catalogVersionStatement } from '../../src/extensions/catalog'

const SOURCES = import.meta.glob('../../src/**/*.ts', { query: '?raw', import: 'default', eager: true }) as Record<string, string>
const BEHAVIOUR = Object.values(
  import.meta.glob('../integration/available-domains-cache.test.ts', { query: '?raw', import: 'default', eager: true }) as Record<string, string>,
)[0]

const AFTER_UPLOAD = 'after an upload commits, after its job ends, after the analysis run commits'
const EXTENSION_WRITE = 'an extension write renames the environment type at once'
const EXTENSION_DELETE = 'an extension deletion shows the raw environment kind as the type at once'
const POST_PROCESSING = 'collector post-processing naming an unnamed environment node (inside an analysis run) shows at once'
const CLIENT_JOB_END = "a collector client's job ends: its environment is listed, collected, at once"
const WIPE = 'clear-database deleting the environments (in the Analyzer object, in chunks) shows at once once the wipe is done'
const NOT_A_COMPLETE_RUN = "never makes a run complete (pending, running, failed, an attempt's error): the answer reads only the latest complete run"

interface Writer {
  tables: string[]
  why: string
  /** the title of the case of available-domains-cache.test.ts that shows the next answer reflects it; null when it cannot change the answer */
  shownBy: string | null
  /** `file#function` that must still contain `text` (the part of the batch that moves the stamp) */
  requires?: { in: string; text: string }
}

/** Keyed `src/<file> <top-level declaration holding the SQL>`. */
const WRITERS: Record<string, Writer> = {
  'src/graph/ingest.store.ts nodeUpsert': {
    tables: ['nodes'],
    why: "an upload's nodes, written only in its commit batch (commitUpload), which adds 1 to its running job's total_files and sets its updated_at: the stamp's running-jobs part",
    shownBy: AFTER_UPLOAD,
    requires: { in: 'src/graph/ingest.store.ts#commitUpload', text: 'total_files = total_files + 1' },
  },
  'src/graph/ingest.store.ts PLACEHOLDER_UPSERT': {
    tables: ['nodes'],
    why: 'placeholder nodes of a collector upload, in the same commit batch as nodeUpsert',
    shownBy: AFTER_UPLOAD,
    requires: { in: 'src/graph/ingest.store.ts#commitUpload', text: 'PLACEHOLDER_UPSERT' },
  },
  'src/graph/jobs.store.ts endJob': {
    tables: ['environment_collections'],
    why: "a job's end: the job leaves the running set, and the collections' count, latest time and job ids are in the stamp",
    shownBy: AFTER_UPLOAD,
  },
  'src/clients/jobs.store.ts endStatements': {
    tables: ['environment_collections'],
    why: "a collector client's job end: its staged posts are written and its collection recorded in one batch; the collections' count, latest time and job ids are in the stamp",
    shownBy: CLIENT_JOB_END,
  },
  'src/findings/analysis.store.ts commitRun': {
    tables: ['analysis_runs', 'finding_sparklines'],
    why: "the run's sparklines and its completion in one batch: it becomes the latest complete run, the stamp's run part",
    shownBy: AFTER_UPLOAD,
  },
  'src/findings/analysis.store.ts createRun': { tables: ['analysis_runs'], why: NOT_A_COMPLETE_RUN, shownBy: null },
  'src/findings/analysis.store.ts runRequestStatements': { tables: ['analysis_runs'], why: NOT_A_COMPLETE_RUN, shownBy: null },
  'src/system/wipe.store.ts wipeStep': {
    tables: ['nodes'],
    why: "clear-database's chunks delete nodes; environment nodes among them change the count of environment nodes, which is in the stamp",
    shownBy: WIPE,
  },
  'src/findings/analysis.store.ts claimRun': { tables: ['analysis_runs'], why: NOT_A_COMPLETE_RUN, shownBy: null },
  'src/findings/analysis.store.ts startAttempt': { tables: ['analysis_runs'], why: NOT_A_COMPLETE_RUN, shownBy: null },
  'src/findings/analysis.store.ts recordAttemptError': { tables: ['analysis_runs'], why: NOT_A_COMPLETE_RUN, shownBy: null },
  'src/findings/analysis.store.ts failRun': { tables: ['analysis_runs'], why: NOT_A_COMPLETE_RUN, shownBy: null },
  'src/extensions/extensions.store.ts upsertStatements': {
    tables: ['extension_environment_principals', 'extension_environments', 'extension_findings', 'extension_kinds', 'extensions'],
    why: "the upsert's statements end with a new catalogue version (bumpVersion), the stamp's catalogue part",
    shownBy: EXTENSION_WRITE,
    requires: { in: 'src/extensions/extensions.store.ts#upsertStatements', text: 's.push(bumpVersion(db, nowIso))' },
  },
  'src/extensions/extensions.store.ts deleteExtension': {
    tables: ['extensions'],
    why: 'the deletion (its kinds, environments and findings cascade) and a new catalogue version in one batch',
    shownBy: EXTENSION_DELETE,
    requires: { in: 'src/extensions/extensions.store.ts#deleteExtension', text: 'bumpVersion(' },
  },
  'src/extensions/extensions.store.ts bumpVersion': {
    tables: ['extension_catalog_version'],
    why: 'the catalogue version itself is in the stamp',
    shownBy: EXTENSION_WRITE,
  },
  'src/collectors/wellknown.store.ts RUN_DOMAIN_ASSOCIATIONS': {
    tables: ['nodes'],
    why: 'names only nodes without a name: the count of unnamed environment nodes is in the stamp',
    shownBy: POST_PROCESSING,
  },
  'src/collectors/wellknown.store.ts FIX_WELL_KNOWN_NODE_TYPES': {
    tables: ['nodes'],
    why: 'sets kind, kinds and updated_at only: the answer reads objectid, name and environment_kind',
    shownBy: null,
  },
  'src/collectors/wellknown.store.ts WELL_KNOWN_GROUPS': {
    tables: ['nodes'],
    why: 'inserts groups with environment_kind NULL (not environment nodes); on conflict sets kind, kinds and updated_at only',
    shownBy: null,
  },
  'src/graph/domain.store.ts setDomainCollected': {
    tables: ['nodes'],
    why: "sets a Domain node's properties (its `collected` flag) and updated_at only: the answer reads objectid, name and environment_kind, and its `collected` comes from environment_collections",
    shownBy: null,
  },
}

/** Comments blanked (lengths kept, so line numbers hold): a comment that quotes SQL is not a writer. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/(^|[\s;,(){}])\/\/.*$/gm, '$1')
}

const DECLARATION = /^(?:export\s+)?(?:async\s+)?(?:function\*?\s+([A-Za-z0-9_$]+)|(?:const|let)\s+([A-Za-z0-9_$]+)\s*[=:])/
const WRITE = /\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+[A-Z]+)?|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)/g
const READ = /\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_]*)\b(?!\s*\()/g

const file = (key: string) => 'src/' + key.replace(/^(\.\.\/)+src\//, '')

/** The top-level declarations of a file with their line ranges. */
function declarations(text: string): { name: string; from: number; to: number }[] {
  const lines = text.split('\n')
  const out: { name: string; from: number; to: number }[] = []
  lines.forEach((l, i) => {
    const m = DECLARATION.exec(l)
    if (m) {
      if (out.length) out[out.length - 1].to = i
      out.push({ name: m[1] ?? m[2], from: i, to: lines.length })
    }
  })
  return out
}

/** Every SQL write in src/: `file declaration` → the tables it writes. */
function writesIn(tables: Set<string>): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  for (const [key, raw] of Object.entries(SOURCES)) {
    const text = code(raw)
    const decls = declarations(text)
    for (const m of text.matchAll(WRITE)) {
      if (!tables.has(m[1])) continue
      const line = text.slice(0, m.index).split('\n').length - 1
      const decl = decls.findLast((d) => d.from <= line)?.name ?? '(module)'
      const k = `${file(key)} ${decl}`
      if (!found.has(k)) found.set(k, new Set())
      found.get(k)!.add(m[1])
    }
  }
  return found
}

/** The tables available-domains' answer reads: from its statements (captured) and the kind catalogue's reads. */
function answerTables(): Set<string> {
  const sql: string[] = []
  const fake = { prepare: (s: string) => (sql.push(s), { bind: () => ({}) }) } as unknown as D1Database
  environmentsStatement(fake, null)
  impactValuesStatement(fake)
  catalogVersionStatement(fake)
  const catalogue = Object.entries(SOURCES).find(([k]) => file(k) === 'src/extensions/catalog.store.ts')![1]
  const tables = new Set<string>()
  for (const s of [...sql, code(catalogue)]) for (const m of s.matchAll(READ)) tables.add(m[1])
  return tables
}

describe("available-domains' stamp: every writer of what the answer reads is accounted for", () => {
  const tables = answerTables()

  it('the answer reads the environment nodes, their collections, the latest complete run and the kind catalogue', () => {
    // the derivation itself (if this changes, read the stamp's comment in graph.store.ts again)
    expect([...tables].sort()).toEqual(
      [
        'analysis_runs',
        'environment_collections',
        'extension_catalog_version',
        'extension_environment_principals',
        'extension_environments',
        'extension_findings',
        'extension_kinds',
        'extensions',
        'finding_sparklines',
        'nodes',
      ].sort(),
    )
  })

  it('every SQL write on those tables in src/ is a known writer, with the tables listed for it', () => {
    const found = writesIn(tables)
    const unknown = [...found].filter(([k]) => !WRITERS[k]).map(([k, t]) => `${k} writes ${[...t].join(', ')}`)
    expect(
      unknown,
      'a new writer of what available-domains answers: make the stamp (graph.store.ts environmentsStampStatement) change with it, ' +
        'add a case to test/integration/available-domains-cache.test.ts showing the next answer reflects the write, then list it in WRITERS here',
    ).toEqual([])
    for (const [k, t] of found) expect([...t].sort(), `${k}: its tables changed; is the stamp still right for it?`).toEqual([...WRITERS[k].tables].sort())
    const gone = Object.keys(WRITERS).filter((k) => !found.has(k))
    expect(gone, 'listed writers that no longer write those tables (remove them from WRITERS)').toEqual([])
  })

  it("each writer's reason still holds where it names code, and names a behavioural case that exists", () => {
    for (const [k, w] of Object.entries(WRITERS)) {
      if (w.shownBy !== null) expect(BEHAVIOUR.includes(`it('${w.shownBy}'`) || BEHAVIOUR.includes(`it("${w.shownBy}"`), `${k}: no case "${w.shownBy}"`).toBe(true)
      if (!w.requires) continue
      const [f, fn] = w.requires.in.split('#')
      const text = code(Object.entries(SOURCES).find(([key]) => file(key) === f)![1])
      const d = declarations(text).find((x) => x.name === fn)
      expect(d, `${w.requires.in} not found`).toBeDefined()
      expect(text.split('\n').slice(d!.from, d!.to).join('\n'), `${k}: ${w.requires.in} no longer contains "${w.requires.text}" (${w.why})`).toContain(w.requires.text)
    }
  })

  it('the scan sees a write it was not told about (so a forgotten writer cannot pass unseen)', () => {
    const probe = code(`const X = 1\nexport async function renameEnvironment(db: D1Database) {\n  // UPDATE nodes in a comment is not a write\n  await db.prepare(\`UPDATE nodes SET name = ?1 WHERE objectid = ?2\`).run()\n}\n`)
    const decls = declarations(probe)
    const hits = [...probe.matchAll(WRITE)].map((m) => [m[1], decls.findLast((d) => d.from <= probe.slice(0, m.index).split('\n').length - 1)?.name])
    expect(hits).toEqual([['nodes', 'renameEnvironment']])
  })
})
