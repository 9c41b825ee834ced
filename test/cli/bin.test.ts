/// <reference types="node" />
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { envelope, FakeServer } from './fake-server'

const root = path.resolve(import.meta.dirname, '../..')
const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'bin-test-key'
let srv: FakeServer
let home: string

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'edgehound-bin-'))
  srv = new FakeServer()
  srv.tokens.set(TOKEN_ID, TOKEN_KEY)
  srv.on('GET', '/api/version', () => ({ json: { data: { API: { current_version: 'v2', deprecated_version: 'none' }, server_version: 'test' } } }))
  srv.on('GET', '/api/v2/tokens', () => ({ status: 403, json: envelope(403, 'missing permission auth/CreateToken', 'auth') }))
  // an answer far larger than a pipe's buffer (64 KiB), printed over many lines
  srv.on('GET', '/api/v2/big', () => ({ text: JSON.stringify({ data: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `object ${i}` })) }, null, 2) }))
  // a Cypher answer whose table (--all) is far larger than a pipe's buffer
  srv.on('POST', '/api/v2/graphs/cypher', () => ({
    json: {
      data: {
        nodes: Object.fromEntries(
          Array.from({ length: 20_000 }, (_, i) => [String(i), { label: `USER${i}@CORP.LOCAL`, kind: 'User', kinds: ['User'], objectId: `S-1-5-21-9-${i}`, isTierZero: false, isOwnedObject: false, lastSeen: '' }]),
        ),
        edges: [],
        literals: [],
      },
    },
  }))
  await srv.start()
})
afterAll(() => srv.close())

function edgehound(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(path.join(root, 'bin/edgehound.mjs'), args, { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...env } as unknown as NodeJS.ProcessEnv }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

describe('bin/edgehound.mjs (the package.json bin)', () => {
  it('is declared in package.json and executable with a node shebang', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'))
    expect(pkg.bin).toEqual({ edgehound: 'bin/edgehound.mjs' })
    expect((await stat(path.join(root, pkg.bin.edgehound))).mode & 0o111).not.toBe(0)
    expect((await readFile(path.join(root, pkg.bin.edgehound), 'utf8')).split('\n')[0]).toBe('#!/usr/bin/env node')
  })

  it('--version and --help exit 0', async () => {
    const v = await edgehound(['--version'])
    expect(v).toMatchObject({ code: 0, stdout: 'edgehound 0.1.0\n' })
    const h = await edgehound(['--help'])
    expect(h.code).toBe(0)
    expect(h.stdout).toContain('Usage: edgehound <command> [options]')
  })

  it('a signed request through the real process, environment configuration, exit 0', async () => {
    const r = await edgehound(['request', 'GET', '/api/version'], { EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).data.API.current_version).toBe('v2')
    expect(srv.requests.at(-1)?.principal).toBe(TOKEN_ID)
  })

  it('errors print the envelope message and exit non-zero; usage errors exit 2', async () => {
    const r = await edgehound(['token', 'list'], { EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('error: missing permission auth/CreateToken [auth]')
    const u = await edgehound(['token'])
    expect(u.code).toBe(2)
  })
})

describe('a reader that closes the pipe early (`edgehound … | head`)', () => {
  it.each([
    ['request', ['request', 'GET', '/api/v2/big']],
    ['cypher', ['cypher', '--all', 'MATCH (n) RETURN n']],
  ])('%s exits quietly with status 0: no EPIPE stack trace', async (_name, args) => {
    const child = spawn(path.join(root, 'bin/edgehound.mjs'), args, {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY } as unknown as NodeJS.ProcessEnv,
    })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    // `head -1`: read the first chunk, then close our end of the pipe
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    child.stdout.destroy()
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
    expect(stderr).toBe('')
    expect(code).toBe(0)
  })
})
