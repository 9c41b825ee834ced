import { describe, expect, it } from 'vitest'
import { ApiError } from '../../src/http/errors'
import { FROM_MALFORMED, parseDetailsFilters, parseSort, parseWindow, repairPlus, TO_BEFORE_FROM, TO_MALFORMED } from '../../src/findings/query'

function apiError(fn: () => unknown): ApiError {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError)
    return e as ApiError
  }
  throw new Error('expected an ApiError')
}

describe('details filters', () => {
  it('parses Accepted=eq:False as sent by connectors, case-insensitively', () => {
    expect(parseDetailsFilters({ Accepted: 'eq:False' })).toEqual({ accepted: { op: 'eq', value: false } })
    expect(parseDetailsFilters({ Accepted: 'TRUE' })).toEqual({ accepted: { op: 'eq', value: true } })
    expect(parseDetailsFilters({ accepted: 'neq:true' })).toEqual({ accepted: { op: 'neq', value: true } })
    const e = apiError(() => parseDetailsFilters({ Accepted: 'eq:maybe' }))
    expect(e.status).toBe(400)
    expect(e.details[0].context).toBe('query.Accepted')
    expect(apiError(() => parseDetailsFilters({ Accepted: 'gt:true' })).details[0].message).toMatch(/not supported/)
  })

  it('normalises timestamps to the stored fixed-width form', () => {
    expect(parseDetailsFilters({ created_at: 'gt:2026-11-25T10:00:00Z' })).toEqual({ created_at: { op: 'gt', value: '2026-11-25T10:00:00.000Z' } })
    expect(parseDetailsFilters({ updated_at: '2026-11-25T12:00:00.5+02:00' })).toEqual({ updated_at: { op: 'eq', value: '2026-11-25T10:00:00.500Z' } })
    expect(apiError(() => parseDetailsFilters({ created_at: 'gt:yesterday' })).details[0].context).toBe('query.created_at')
  })

  it('ids and principals', () => {
    expect(parseDetailsFilters({ id: 'gte:7', FromPrincipal: 'S-1', ToPrincipal: 'neq:S-2', Principal: 'S-3' })).toEqual({
      id: { op: 'gte', value: 7 },
      from_principal: { op: 'eq', value: 'S-1' },
      to_principal: { op: 'neq', value: 'S-2' },
      principal: { op: 'eq', value: 'S-3' },
    })
    expect(apiError(() => parseDetailsFilters({ id: '-1' })).status).toBe(400)
  })
})

describe('sort_by', () => {
  it('defaults to created_at; accepts BloodHound and snake_case names and a leading minus', () => {
    expect(parseSort(undefined)).toEqual([{ column: 'created_at', desc: false }])
    expect(parseSort('-ImpactPercentage,id')).toEqual([
      { column: 'impact_percentage', desc: true },
      { column: 'id', desc: false },
    ])
    expect(parseSort('FromPrincipal')).toEqual([{ column: 'from_principal', desc: false }])
  })
  it('rejects unknown columns and empty values with 400', () => {
    expect(apiError(() => parseSort('password')).details[0]).toMatchObject({ context: 'query.sort_by' })
    expect(apiError(() => parseSort('')).details[0].message).toBe('empty sort_by parameter supplied')
  })
})

describe('sparkline window', () => {
  const now = new Date('2026-11-25T12:00:00.000Z')
  it('defaults: to = now, from = 30 days before', () => {
    const w = parseWindow(undefined, undefined, now)
    expect(w.to.toISOString()).toBe('2026-11-25T12:00:00.000Z')
    expect(w.from.toISOString()).toBe('2026-10-26T12:00:00.000Z')
  })
  it('accepts RFC 3339 with offsets, including a + that form decoding turned into a space', () => {
    expect(repairPlus('2026-11-01T00:00:00 02:00')).toBe('2026-11-01T00:00:00+02:00')
    const w = parseWindow('2026-11-01T00:00:00 02:00', '2026-11-02T00:00:00Z', now)
    expect(w.from.toISOString()).toBe('2026-10-31T22:00:00.000Z')
  })
  it('malformed from/to and to before from are 400 with messages that say so', () => {
    expect(apiError(() => parseWindow('nope', undefined, now)).details[0]).toEqual({ context: 'query.from', message: FROM_MALFORMED })
    expect(apiError(() => parseWindow(undefined, '2026-13-01T00:00:00Z', now)).details[0]).toEqual({ context: 'query.to', message: TO_MALFORMED })
    expect(apiError(() => parseWindow('2026-11-02T00:00:00Z', '2026-11-01T00:00:00Z', now)).details[0]).toEqual({ context: 'query.to', message: TO_BEFORE_FROM })
    // an empty window is allowed
    expect(parseWindow('2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z', now).from.getTime()).toBe(Date.parse('2026-11-01T00:00:00Z'))
  })
})
