import { describe, expect, it } from 'vitest'
import {
  offsetError,
  offsetRangeError,
  OFFSET_MEMORY_MS,
  pruneOffsets,
  rememberedMax,
  rememberOffset,
  VALIDITY_WINDOW_MS,
} from '../../src/auth/request-date'
import { parseRfc3339WithOffset } from '../../src/auth/signature'

const H = 3600_000
const MIN = 60_000

describe('RequestDate offsets', () => {
  it('parses the offset in minutes east of UTC; Z and -00:00 are 0', () => {
    expect(parseRfc3339WithOffset('2026-11-25T21:06:03.134832+00:00')?.offsetMinutes).toBe(0)
    expect(parseRfc3339WithOffset('2026-11-25T21:06:03Z')?.offsetMinutes).toBe(0)
    expect(Object.is(parseRfc3339WithOffset('2026-11-25T21:06:03-00:00')?.offsetMinutes, 0)).toBe(true)
    expect(parseRfc3339WithOffset('2026-06-30T23:30:00-05:00')).toEqual({ time: new Date('2026-07-01T04:30:00Z'), offsetMinutes: -300 })
    expect(parseRfc3339WithOffset('2026-06-30T23:30:00+05:45')?.offsetMinutes).toBe(345)
  })

  it('only real time zones: -12:00 … +14:00', () => {
    expect(offsetRangeError(-720)).toBeNull()
    expect(offsetRangeError(840)).toBeNull()
    expect(offsetRangeError(-721)).toMatch('-12:01 is not a real time zone')
    expect(offsetRangeError(841)).toMatch('+14:01 is not a real time zone')
    expect(offsetRangeError(-1200)).toMatch('-20:00')
    expect(offsetRangeError(345)).toBeNull() // +05:45, Nepal
    expect(offsetRangeError(61)).toMatch('+01:01 is not a real time zone')
  })

  it('a new offset above the remembered maximum comes with the current time (at most 5 minutes behind)', () => {
    const now = 10 * H
    const mem = { '0': now }
    expect(offsetError(mem, 60, now - 5 * MIN, now)).toBeNull() // spring forward
    expect(offsetError(mem, 600, now, now)).toBeNull() // a move east
    expect(offsetError(mem, 105, now - 46 * MIN, now)).toMatch('above the offset this token used recently (+00:00)')
  })

  it('no copy of a fresh request raises the remembered maximum by more than an hour', () => {
    // The holder of a request signed in offset O at T picks any offset O' and minutes; T ranges over the hour.
    let highest = -Infinity
    for (let sm = 0; sm < 60; sm += 1) {
      const T = 1000 * H + sm * MIN
      const mem = { '0': T }
      for (let Op = 15; Op <= 840; Op += 15) {
        const cMax = Math.floor(T / H) * H + H - 1 - Op * MIN
        for (const now of [T, T + MIN, T + 30 * MIN]) if (offsetError(mem, Op, Math.min(cMax, now), now) === null) highest = Math.max(highest, Op)
      }
    }
    expect(highest).toBe(60)
  })

  it('no remembered offset: any offset passes (the first request of a token)', () => {
    expect(offsetError({}, -720, 0, 0)).toBeNull()
    // entries past the memory are forgotten
    expect(offsetError({ '120': 0 }, -720, OFFSET_MEMORY_MS + 1, OFFSET_MEMORY_MS + 1)).toBeNull()
  })

  it('at or above the remembered maximum: passes; more than an hour below: refused', () => {
    const now = 10 * H
    const mem = { '-300': now - H, '60': now - 2 * H }
    expect(rememberedMax(mem, now)).toBe(60)
    expect(offsetError(mem, 60, now - 59 * MIN, now)).toBeNull()
    expect(offsetError(mem, -1, now, now)).toMatch('more than one hour below the offset this token used recently (+01:00)')
    expect(offsetError(mem, -300, now, now)).toMatch('more than one hour below')
  })

  it('below the maximum by D ≤ 1 h: the claimed time may be at most max(5 min, 60 min − D) behind', () => {
    const now = 10 * H
    const mem = { '120': now }
    expect(offsetError(mem, 60, now - 5 * MIN, now)).toBeNull()
    expect(offsetError(mem, 60, now - 5 * MIN - 1, now)).toMatch('at most 5 minutes are allowed')
    expect(offsetError(mem, 90, now - 30 * MIN, now)).toBeNull()
    expect(offsetError(mem, 90, now - 30 * MIN - 1, now)).toMatch('at most 30 minutes')
    expect(offsetError(mem, 60, now + 59 * MIN, now)).toBeNull() // ahead is not a replay
  })

  it('the bound: a request signed at T in offset O is never admitted after T + 2 h 5 min, for every replay offset', () => {
    // Exhaustive over O (15-minute steps), replay offsets O' (1-minute steps) and signing minute; the
    // replayer picks the minutes that put the claimed instant as late as still admissible.
    let worst = 0
    for (let O = -720; O <= 840; O += 15) {
      for (let sm = 0; sm < 60; sm += 7) {
        const T = 1000 * H + sm * MIN
        const mem = { [String(O)]: T }
        const hourNaive = Math.floor((T + O * MIN) / H) * H
        for (let Op = -720; Op <= 840; Op += 1) {
          if (offsetRangeError(Op)) continue
          // latest now at which some minutes m are admitted: now ≤ c + allowedBehind, c = hour + m − O'
          const cMax = hourNaive + H - 1 - Op * MIN
          for (const now of [cMax + 60 * MIN, cMax + 5 * MIN, cMax + 30 * MIN]) {
            if (now - T <= worst) continue
            if (Math.abs(cMax - now) > H) continue
            if (offsetError(mem, Op, cMax, now) === null) worst = now - T
          }
        }
      }
    }
    expect(worst).toBeLessThanOrEqual(VALIDITY_WINDOW_MS)
    expect(worst).toBeGreaterThan(2 * H) // the bound is reached (one hour below, 5 minutes behind)
  })

  it('remembering writes storage only for a new offset or a stale entry, and drops aged entries', () => {
    const now = 100 * H
    expect(rememberOffset({}, 60, now)).toEqual({ '60': now })
    expect(rememberOffset({ '60': now - 10 * MIN }, 60, now)).toBeNull()
    expect(rememberOffset({ '60': now - 2 * H, '0': now - OFFSET_MEMORY_MS - 1 }, 60, now)).toEqual({ '60': now })
    expect(pruneOffsets({ '60': now - 2 * H, '0': now - OFFSET_MEMORY_MS - 1 }, now)).toEqual({
      memory: { '60': now - 2 * H },
      nextExpiryMs: now - 2 * H + OFFSET_MEMORY_MS,
    })
    expect(pruneOffsets({}, now).nextExpiryMs).toBeNull()
  })
})
