/**
 * The recurrence of a collection schedule: the subset of RFC 5545 that BloodHound Enterprise's schedules use
 * (a start and a fixed period), as the text
 *
 *   DTSTART:20261201T020000Z
 *   RRULE:FREQ=DAILY;INTERVAL=1
 *
 * (lines separated by a newline or written on one line separated by a space; DTSTART optional, default: the
 * schedule's creation time). FREQ is HOURLY, DAILY or WEEKLY, INTERVAL 1..1000 (default 1). Anything else
 * (BYDAY, COUNT, UNTIL, other frequencies) is refused with a message naming it, never half understood.
 * Pure: text and times in, times out.
 */

export interface Recurrence {
  startMs: number
  periodMs: number
}

const PERIOD: Record<string, number> = { HOURLY: 3_600_000, DAILY: 86_400_000, WEEKLY: 7 * 86_400_000 }

export function parseRrule(text: string, defaultStartMs: number): Recurrence | string {
  const parts = text.trim().split(/\s+/).filter(Boolean)
  let startMs = defaultStartMs
  let rule: string | null = null
  for (const p of parts) {
    const upper = p.toUpperCase()
    if (upper.startsWith('DTSTART:')) {
      const m = /^DTSTART:(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(upper)
      if (!m) return 'DTSTART must be a UTC time such as DTSTART:20261201T020000Z'
      startMs = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
      if (Number.isNaN(startMs) || new Date(startMs).getUTCDate() !== +m[3]) return 'DTSTART is not a valid date'
    } else if (upper.startsWith('RRULE:')) {
      if (rule !== null) return 'only one RRULE is allowed'
      rule = upper.slice(6)
    } else return `unsupported part "${p.slice(0, 40)}": expected DTSTART:… and RRULE:…`
  }
  if (rule === null) return 'an RRULE is required, e.g. RRULE:FREQ=DAILY;INTERVAL=1'
  let period: number | null = null
  let interval = 1
  for (const kv of rule.split(';').filter(Boolean)) {
    const [k, v] = kv.split('=')
    if (k === 'FREQ') {
      if (!(v in PERIOD)) return 'FREQ must be HOURLY, DAILY or WEEKLY'
      period = PERIOD[v]
    } else if (k === 'INTERVAL') {
      if (!/^\d{1,4}$/.test(v ?? '') || +v < 1 || +v > 1000) return 'INTERVAL must be a whole number from 1 to 1000'
      interval = +v
    } else return `RRULE part ${k} is not supported (FREQ and INTERVAL only)`
  }
  if (period === null) return 'the RRULE needs FREQ'
  return { startMs, periodMs: period * interval }
}

/** The first occurrence strictly after `afterMs` (the start itself when it is later). */
export function nextAfter(r: Recurrence, afterMs: number): number {
  if (afterMs < r.startMs) return r.startMs
  return r.startMs + (Math.floor((afterMs - r.startMs) / r.periodMs) + 1) * r.periodMs
}

/** The latest occurrence at or before `nowMs`, or null before the start. */
export function latestAtOrBefore(r: Recurrence, nowMs: number): number | null {
  if (nowMs < r.startMs) return null
  return r.startMs + Math.floor((nowMs - r.startMs) / r.periodMs) * r.periodMs
}
