import { describe, expect, it } from 'vitest'
import { BASE, expectEnvelope, workerFetch } from '../helpers'
import { ASSETS, CONTENT_SECURITY_POLICY, contentHash } from '../../src/system/explorer/page'
import { matchesEtag } from '../../src/system/docs.routes'

const get = (path: string, init: RequestInit = {}) => workerFetch(new Request(`${BASE}${path}`, init))

describe('API explorer page /api/v2/docs', () => {
  it('serves HTML without credentials, with a self-only CSP and no external references', async () => {
    const res = await get('/api/v2/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toBe(CONTENT_SECURITY_POLICY)
    // every fetch directive is 'self' or 'none'; nothing else is allowed in
    for (const directive of csp.split(';').map((d) => d.trim())) {
      const [, ...sources] = directive.split(/\s+/)
      for (const s of sources) expect(["'self'", "'none'"]).toContain(s)
    }
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('requestid')).toMatch(/^[0-9a-f-]{36}$/)
    const html = await res.text()
    expect(html).toContain(`<script src="/api/v2/docs/explorer.js?v=${ASSETS['explorer.js'].hash}" defer></script>`)
    expect(html).toContain(`href="/api/v2/docs/explorer.css?v=${ASSETS['explorer.css'].hash}"`)
    // no inline script or style (the CSP would block them), no absolute URLs to anywhere
    expect(html).not.toMatch(/<script>(?!<\/script>)/)
    expect(html).not.toMatch(/<style|style="/)
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('serves the script and stylesheet from the worker with ETags and 304 revalidation', async () => {
    for (const [name, a] of Object.entries(ASSETS)) {
      const res = await get(`/api/v2/docs/${name}?v=${a.hash}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(a.type)
      const etag = res.headers.get('etag')
      expect(etag).toBe(`"${contentHash(a.body)}"`)
      expect(res.headers.get('cache-control')).toBe('public, max-age=300')
      const body = await res.text()
      expect(body).toBe(a.body)
      expect(body).not.toMatch(/https?:\/\/(?!www\.w3\.org)/) // nothing loaded from elsewhere
      const again = await get(`/api/v2/docs/${name}`, { headers: { 'If-None-Match': etag! } })
      expect(again.status).toBe(304)
      expect(await again.text()).toBe('')
      const stale = await get(`/api/v2/docs/${name}`, { headers: { 'If-None-Match': '"00000000"' } })
      expect(stale.status).toBe(200)
      await stale.arrayBuffer()
    }
  })

  it('the script reads the spec and signs with SubtleCrypto, building the DOM without innerHTML', () => {
    const js = ASSETS['explorer.js'].body
    expect(js).toContain("'/api/v2/spec'")
    expect(js).toContain("crypto.subtle.importKey('raw'")
    expect(js).toContain("'svcsignature '")
    expect(js).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/)
    expect(js).not.toMatch(/localStorage|sessionStorage|document\.cookie/)
  })

  it('is listed in the OpenAPI document as a public operation', async () => {
    const spec = (await (await get('/api/v2/spec')).json()) as { paths: Record<string, Record<string, { security: unknown[]; operationId: string }>> }
    expect(spec.paths['/api/v2/docs'].get.operationId).toBe('GetApiExplorer')
    expect(spec.paths['/api/v2/docs'].get.security).toEqual([])
    expect(spec.paths['/api/v2/docs/explorer.js'].get.security).toEqual([])
  })

  it('other methods are a 405 envelope, unknown assets a 404 envelope', async () => {
    const r = await get('/api/v2/docs', { method: 'POST' })
    expect(r.headers.get('allow')).toContain('GET')
    await expectEnvelope(r, 405)
    await expectEnvelope(await get('/api/v2/docs/other.js'), 404, 'no such endpoint')
  })

  it('HEAD answers the headers without a body', async () => {
    const res = await get('/api/v2/docs', { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(await res.text()).toBe('')
  })

  it('matchesEtag handles lists, weak tags and *', () => {
    expect(matchesEtag(undefined, '"a"')).toBe(false)
    expect(matchesEtag('"b", W/"a"', '"a"')).toBe(true)
    expect(matchesEtag('*', '"a"')).toBe(true)
    expect(matchesEtag('"ab"', '"a"')).toBe(false)
  })
})
