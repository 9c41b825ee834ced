/// <reference types="node" />
/**
 * The OpenAPI document through the standard tools integrators use (issue 18 item 5): a validator
 * (@readme/openapi-parser, which resolves every $ref) and a client generator (openapi-typescript), whose
 * output must then type-check. These tools run in Node, so the document is built here from the route
 * table exactly as GET /api/v2/spec builds it (test/integration/openapi.test.ts checks that the served
 * document is this one); a route added later is covered without editing this file.
 */
import { describe, expect, it } from 'vitest'
import { validate } from '@readme/openapi-parser'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { ROUTES } from '../../src/app'
import { buildOpenApi } from '../../src/http/openapi'

const doc = () => JSON.parse(JSON.stringify(buildOpenApi(ROUTES, 'https://edgehound.example'))) as {
  paths: Record<string, Record<string, { operationId: string }>>
  components: { schemas: Record<string, unknown> }
}

/** Every $ref in the document, which must all point into it (no "#/$defs/…" left from zod's output). */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out))
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) k === '$ref' && typeof v === 'string' ? out.push(v) : refs(v, out)
  return out
}

describe('the OpenAPI document with standard tools', () => {
  it('every $ref resolves inside the document; named schemas live under components/schemas', () => {
    const d = doc()
    const all = refs(d)
    expect(all.filter((r) => !r.startsWith('#/components/'))).toEqual([])
    for (const r of new Set(all)) {
      const target = r.slice(2).split('/').reduce<unknown>((n, k) => (n as Record<string, unknown> | undefined)?.[k], d)
      expect(target, `${r} does not resolve`).toBeDefined()
    }
    expect(Object.keys(d.components.schemas)).toContain('ErrorEnvelope')
    expect(JSON.stringify(d)).not.toContain('$defs')
  })

  it('@readme/openapi-parser validates it with no error and no warning', async () => {
    const result = await validate(doc() as never)
    expect(result).toMatchObject({ valid: true, warnings: [] })
  }, 60_000)

  it('openapi-typescript generates a client whose types compile and name every operation and schema', async () => {
    const d = doc()
    const source = astToString(await openapiTS(d as never))
    const operations = Object.values(d.paths).flatMap((p) => Object.values(p).map((op) => op.operationId))
    for (const id of operations) expect(source, id).toContain(`${id}: {`)
    for (const name of Object.keys(d.components.schemas)) expect(source, name).toContain(`${name}: {`)
    // the generated types are usable: an error envelope and a token list response type-check
    const usage = `
      const e: components['schemas']['ErrorEnvelope'] = { http_status: 404, timestamp: 't', request_id: 'r', errors: [{ context: 'c', message: 'm' }] }
      type Tokens = operations['ListTokens']['responses'][200]['content']['application/json']
      const t: Tokens['data']['tokens'][number]['id'] = 'x'
      export { e, t }`
    const files: Record<string, string> = { '/v/api.ts': `${source}\n${usage}` }
    const options: ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, lib: ['lib.es2022.d.ts'], target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [] }
    const host = ts.createCompilerHost(options)
    const { getSourceFile, fileExists, readFile } = host
    host.getSourceFile = (f, v, ...rest) => (f in files ? ts.createSourceFile(f, files[f], v) : getSourceFile.call(host, f, v, ...rest))
    host.fileExists = (f) => f in files || fileExists.call(host, f)
    host.readFile = (f) => files[f] ?? readFile.call(host, f)
    const program = ts.createProgram(['/v/api.ts'], options, host)
    const diagnostics = ts.getPreEmitDiagnostics(program).map((x) => ts.flattenDiagnosticMessageText(x.messageText, '\n'))
    expect(diagnostics).toEqual([])
  }, 60_000)
})
