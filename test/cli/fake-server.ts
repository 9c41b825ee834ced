/// <reference types="node" />
/**
 * A small node:http stand-in for EdgeHound: routes are registered per test, every signed request is
 * verified with the service's own signature code (so a CLI that signs wrongly fails here as it would
 * against the worker), and every request is recorded for assertions.
 */
import http from 'node:http'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { CliIO } from '../../src/cli/io'
import { fromBase64Strict } from '../../src/auth/encoding'
import { verifySignature } from '../../src/auth/signature'

export interface Recorded {
  method: string
  target: string
  path: string
  query: URLSearchParams
  headers: http.IncomingHttpHeaders
  body: Buffer
  /** the token id of a verified signed request, 'bearer:<jwt>' for a bearer, null when none */
  principal: string | null
}

export interface Reply {
  status?: number
  json?: unknown
  text?: string
  headers?: Record<string, string>
}

type Handler = (req: Recorded, params: Record<string, string>) => Reply | Promise<Reply>

export function envelope(status: number, message: string, context = '') {
  return { http_status: status, timestamp: new Date().toISOString(), request_id: '00000000-0000-4000-8000-000000000000', errors: [{ context, message }] }
}

/** A started fake server that accepts the given token (the CLI tests' common `beforeEach`). */
export function startFakeServer(tokenId: string, tokenKey: string): Promise<FakeServer> {
  const srv = new FakeServer()
  srv.tokens.set(tokenId, tokenKey)
  return srv.start()
}

export class FakeServer {
  readonly requests: Recorded[] = []
  readonly tokens = new Map<string, string>()
  readonly sessions = new Set<string>()
  private routes: { method: string; re: RegExp; names: string[]; handler: Handler }[] = []
  private server!: http.Server
  url = ''

  on(method: string, pattern: string, handler: Handler): this {
    const names: string[] = []
    const re = new RegExp('^' + pattern.replace(/:([a-z_]+)/g, (_, n) => (names.push(n), '([^/]+)')) + '$')
    this.routes.push({ method, re, names, handler })
    return this
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', async () => {
        const body = Buffer.concat(chunks)
        const target = req.url ?? '/'
        const u = new URL(target, 'http://x')
        const rec: Recorded = { method: req.method ?? 'GET', target, path: u.pathname, query: u.searchParams, headers: req.headers, body, principal: null }
        this.requests.push(rec)
        const send = (r: Reply) => {
          const headers: Record<string, string> = { RequestID: '00000000-0000-4000-8000-000000000000', ...(r.headers ?? {}) }
          let payload = ''
          if (r.json !== undefined) {
            headers['Content-Type'] = 'application/json'
            payload = JSON.stringify(r.json)
          } else if (r.text !== undefined) {
            headers['Content-Type'] ??= 'text/plain; charset=utf-8'
            payload = r.text
          }
          res.writeHead(r.status ?? 200, headers)
          res.end(payload)
        }
        const auth = req.headers.authorization
        if (auth) {
          const [scheme, id] = auth.split(' ')
          if (scheme === 'svcsignature') {
            const key = this.tokens.get(id)
            const date = String(req.headers.requestdate ?? '')
            const sig = fromBase64Strict(String(req.headers.signature ?? ''))
            if (!key || !sig || !(await verifySignature(key, rec.method, target, date, body, sig)))
              return send({ status: 401, json: envelope(401, key ? 'signature digest mismatch' : 'unknown or revoked token', 'auth') })
            rec.principal = id
          } else if (scheme === 'Bearer') {
            if (!this.sessions.has(id)) return send({ status: 401, json: envelope(401, 'bearer token expired', 'auth') })
            rec.principal = `bearer:${id}`
          }
        }
        for (const r of this.routes) {
          if (r.method !== rec.method) continue
          const m = r.re.exec(u.pathname)
          if (!m) continue
          const params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]))
          try {
            return send(await r.handler(rec, params))
          } catch (e) {
            return send({ status: 500, json: envelope(500, String(e)) })
          }
        }
        send({ status: 404, json: envelope(404, 'no such endpoint', 'route') })
      })
    })
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r))
    const addr = this.server.address() as { port: number }
    this.url = `http://127.0.0.1:${addr.port}`
    return this
  }

  /** only the requests that reached a route (or failed) on this path */
  to(method: string, pathPrefix: string): Recorded[] {
    return this.requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix))
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()))
  }
}

/** Parses a recorded multipart body with the platform's own parser. */
export async function formOf(rec: Recorded): Promise<FormData> {
  return new Request('http://x/', { method: 'POST', headers: { 'content-type': String(rec.headers['content-type']) }, body: rec.body }).formData()
}

export interface TestIO extends CliIO {
  out: () => string
  err: () => string
  sleeps: number[]
  stdinText: string
}

/** An in-memory CliIO rooted in a fresh temporary directory. */
/** `realSleep`: waits really happen (against a real server: a poll loop must not hammer it); they are recorded either way. */
export async function testIO(env: Record<string, string | undefined> = {}, opts: { stdin?: string; prompt?: string; realSleep?: boolean } = {}): Promise<TestIO> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'edgehound-cli-'))
  let out = ''
  let err = ''
  const io: TestIO = {
    stdout: { write: (s: string) => ((out += s), true) },
    stderr: { write: (s: string) => ((err += s), true) },
    readStdin: async () => new TextEncoder().encode(opts.stdin ?? ''),
    promptSecret: opts.prompt !== undefined ? async () => opts.prompt as string : undefined,
    env: { EDGEHOUND_CONFIG: path.join(dir, 'config', 'edgehound.json'), ...env },
    cwd: dir,
    homedir: dir,
    fetch: (req) => fetch(req),
    sleeps: [],
    sleep: async (ms) => {
      io.sleeps.push(ms)
      if (opts.realSleep) await new Promise((r) => setTimeout(r, ms))
    },
    now: () => new Date(),
    out: () => out,
    err: () => err,
    stdinText: opts.stdin ?? '',
  }
  return io
}
