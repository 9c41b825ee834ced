import { describe, expect, it } from 'vitest'
import { BASE, workerFetch } from '../helpers'

// The console's files are served by Workers Static Assets (wrangler.toml [assets]), which this pool does not
// route through; test/browser/console.mjs checks them (and their CSP) against a real local server.
describe('the console entry', () => {
  it('GET / redirects to the console at /ui/', async () => {
    const res = await workerFetch(new Request(`${BASE}/`, { redirect: 'manual' }))
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/ui/')
  })
})
