import { describe, expect, it } from 'vitest'
import { Logons } from '../../src/findings/dataquality'
import { ACTIVITY_WINDOW_SECONDS as W } from '../../src/findings/dataquality.store'

/** Completeness candidates arrive page by page, in any order of logon times (issue 27). */
describe('Logons: the 14-day activity window of the completeness fractions', () => {
  it('counts a logon exactly 14 days before the newest as active, one second earlier as not', () => {
    const l = new Logons()
    l.add(1000 + W, true)
    l.add(1000, true)
    l.add(999, true)
    expect(l.result()).toEqual({ active: 2, covered: 2 })
  })

  it('moves the window when a newer logon arrives later, whatever the order of the pages', () => {
    const times = Array.from({ length: 5000 }, (_, i) => i * 3600)
    const covered = (t: number) => t % 7200 === 0
    const newest = times[times.length - 1]
    const expected = {
      active: times.filter((t) => t >= newest - W).length,
      covered: times.filter((t) => t >= newest - W && covered(t)).length,
    }
    for (const order of [times, [...times].reverse(), [...times].sort((a, b) => ((a * 7919) % 5003) - ((b * 7919) % 5003))]) {
      const l = new Logons()
      for (const t of order) l.add(t, covered(t))
      expect(l.result()).toEqual(expected)
    }
  })

  it('reads a page\'s JSON pairs and ignores what is not a finite number; nothing active without candidates', () => {
    const l = new Logons()
    l.addJson(JSON.stringify([[100, 1], [50, 0], [null, 1]]))
    l.addJson(null)
    expect(l.result()).toEqual({ active: 2, covered: 1 })
    expect(new Logons().result()).toEqual({ active: 0, covered: 0 })
  })
})
