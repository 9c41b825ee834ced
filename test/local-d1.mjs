// A fresh local D1 for tests that start the real worker (the browser suites, test/cli/e2e-worker.test.ts).
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')

/**
 * Every migration in migrations/ applied to a fresh local D1 under `persist` (the layout `wrangler dev
 * --persist-to` reads), as `wrangler d1 migrations apply DB --local` does it: the same d1_migrations table and
 * rows, each file with its INSERT into that table as one batch of statements split by wrangler's own splitter.
 * The difference is one Miniflare for all of them, where wrangler starts a workerd per file (33 files: ~45 s of
 * CPU, over half of a browser suite's time). The resulting database is the same as wrangler's (schema, rows and
 * bookkeeping compared with `sqlite3 .dump`). The real command is still run by test/hardening/restart.mjs (and by
 * `npm run deploy` against the real database).
 */
export async function applyMigrations(persist) {
  const { Miniflare } = await import('miniflare')
  const { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } = await import('wrangler')
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(root, 'wrangler.toml'))
  const mf = new Miniflare({ modules: true, script: 'export default {}', d1Persist: path.join(persist, 'v3', 'd1'), d1Databases: workerOptions.d1Databases })
  try {
    const db = await mf.getD1Database('DB')
    // wrangler's statement, character for character (SQLite keeps the text in sqlite_master)
    await db
      .prepare('CREATE TABLE IF NOT EXISTS d1_migrations(\n\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,\n\t\tname       TEXT UNIQUE,\n\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL\n);')
      .run()
    const dir = path.join(root, 'migrations')
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.sql')).sort()) {
      const sql = `${readFileSync(path.join(dir, name), 'utf8')}\nINSERT INTO d1_migrations (name) values ('${name}');\n`
      try {
        await db.batch(unstable_splitSqlQuery(sql).map((q) => db.prepare(q)))
      } catch (e) {
        throw new Error(`migration ${name} failed: ${e?.cause?.message ?? e?.message ?? e}`)
      }
    }
  } finally {
    await mf.dispose()
  }
}
