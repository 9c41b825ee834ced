/** The isolate's memory of idle polls (src/clients/poll-cache.ts): its bounds, pure. */
import { describe, expect, it } from 'vitest'
import { forgetClient, knownIdle, rememberIdle } from '../../src/clients/poll-cache'

const T = Date.parse('2026-11-29T04:00:00.000Z')

describe('poll memory', () => {
  it('holds for freshMs, then forgets', () => {
    rememberIdle('u1', 'c1', T, 15_000, null)
    expect(knownIdle('u1', T + 14_999)).toBe('c1')
    expect(knownIdle('u1', T + 15_000)).toBeNull()
    expect(knownIdle('u1', T + 1)).toBeNull() // forgotten, not revived
  })
  it('never outlives the next pending job', () => {
    rememberIdle('u2', 'c2', T, 15_000, new Date(T + 2_000).toISOString())
    expect(knownIdle('u2', T + 1_999)).toBe('c2')
    expect(knownIdle('u2', T + 2_000)).toBeNull()
  })
  it('remembers nothing with freshMs 0, a next job already due, or an unreadable time', () => {
    rememberIdle('u3', 'c3', T, 0, null)
    rememberIdle('u4', 'c4', T, 15_000, new Date(T).toISOString())
    rememberIdle('u5', 'c5', T, 15_000, 'not a time')
    for (const u of ['u3', 'u4', 'u5']) expect(knownIdle(u, T)).toBeNull()
  })
  it('forgetClient ends the memory of that client only', () => {
    rememberIdle('u6', 'c6', T, 15_000, null)
    rememberIdle('u7', 'c7', T, 15_000, null)
    forgetClient('c6')
    expect(knownIdle('u6', T + 1)).toBeNull()
    expect(knownIdle('u7', T + 1)).toBe('c7')
  })
})
