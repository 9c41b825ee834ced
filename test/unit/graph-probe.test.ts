import { env } from 'cloudflare:test'
import { it, expect } from 'vitest'
it('probe fts5 trigram', async () => {
  const db = (env as any).DB as D1Database
  const out: string[] = []
  try {
    await db.exec("CREATE VIRTUAL TABLE p_fts USING fts5(name, objectid, tokenize='trigram')")
    await db.prepare("INSERT INTO p_fts(rowid, name, objectid) VALUES (1, 'DOMAIN ADMINS@CORP.LOCAL', 'S-1-5-21-1-512')").run()
    const r = await db.prepare("SELECT rowid FROM p_fts WHERE p_fts MATCH ?").bind('"admins"').all()
    out.push('trigram ok ' + JSON.stringify(r.results))
    const r2 = await db.prepare("SELECT rowid FROM p_fts WHERE name LIKE ?").bind('%min%').all()
    out.push('like ' + JSON.stringify(r2.results))
    await db.exec("CREATE VIRTUAL TABLE p_fts2 USING fts5(name, content='', contentless_delete=1, tokenize='trigram')")
    out.push('contentless_delete ok')
  } catch (e) { out.push('ERR ' + (e as Error).message) }
  try {
    const r = await db.prepare("SELECT json_patch('{\"a\":1}', '{\"b\":2}') AS p, sqlite_version() AS v").first()
    out.push(JSON.stringify(r))
  } catch (e) { out.push('ERR ' + (e as Error).message) }
  console.log(out.join('\n'))
  expect(out.length).toBeGreaterThan(0)
})
