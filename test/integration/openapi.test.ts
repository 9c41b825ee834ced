import { describe, expect, it } from 'vitest'
import { createApp, ROUTES } from '../../src/app'
import { openApiPath } from '../../src/http/route'
import { buildOpenApi } from '../../src/http/openapi'
import { BASE, workerFetch } from '../helpers'

type Doc = { openapi: string; paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown>; 'x-permission'?: string | null; 'x-permission-for-more'?: string; deprecated?: boolean }>> }

async function spec(path = '/api/v2/spec'): Promise<Doc> {
  const res = await workerFetch(new Request(BASE + path))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/application\/json/)
  return res.json() as Promise<Doc>
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and served at /api/v2/spec and /api/v2/swagger', async () => {
    const a = await spec()
    const b = await spec('/api/v2/swagger')
    expect(a.openapi).toBe('3.1.0')
    expect(b).toEqual(a)
  })

  it('is the document built from the route table (what test/cli/openapi-tools.test.ts runs the standard tools on)', async () => {
    const served = await spec()
    expect(served).toEqual(JSON.parse(JSON.stringify(buildOpenApi(ROUTES, BASE))))
    // named schemas are components, and no pointer is left to zod's local $defs
    expect(Object.keys((served as unknown as { components: { schemas: object } }).components.schemas)).toContain('ErrorEnvelope')
    expect(JSON.stringify(served)).not.toContain('#/$defs/')
  })

  it('documents every route the app serves, each with its security requirement and error responses', async () => {
    const doc = await spec()
    const app = createApp()
    const served = app.routes.filter((r) => r.method !== 'ALL' && r.path !== '/*')
    expect(served.length).toBeGreaterThan(10)
    const hidden = new Set(ROUTES.filter((r) => r.def.hidden).map((r) => `${r.def.method.toUpperCase()} ${r.def.path}`))
    for (const r of served) {
      if (hidden.has(`${r.method} ${r.path}`)) continue
      const op = doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]
      expect(op, `${r.method} ${r.path} missing from the OpenAPI document`).toBeDefined()
      const def = ROUTES.find((x) => x.def.method.toUpperCase() === r.method && x.def.path === r.path)!.def
      if (def.auth === 'public' && def.recognises) {
        // public, and a caller's credential is recognised (and must verify): anonymous or either scheme
        expect(op.security, `${r.method} ${r.path} security`).toEqual([{}, { SignedRequest: [] }, { BearerAuth: [] }])
        expect(op['x-permission-for-more']).toBe(def.recognises)
        expect(op.responses['401'], `${r.method} ${r.path} 401`).toBeDefined()
        expect(op.responses['403'], `${r.method} ${r.path} never refuses a role`).toBeUndefined()
      } else if (def.auth === 'public') expect(op.security).toEqual([])
      else {
        expect(op.security, `${r.method} ${r.path} security`).toEqual([{ SignedRequest: [] }, { BearerAuth: [] }])
        expect(op.responses['401'], `${r.method} ${r.path} 401`).toBeDefined()
        if (def.auth !== 'authenticated') {
          expect(op['x-permission']).toBe(def.auth)
          expect(op.responses['403'], `${r.method} ${r.path} 403`).toBeDefined()
        }
      }
      for (const s of ['400', '429', '500']) expect(op.responses[s], `${r.method} ${r.path} ${s}`).toBeDefined()
    }
  })
})
