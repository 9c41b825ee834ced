// The Collector clients section's pure logic (ui/src/pages/admin/model.ts): who sees it, the create form's body,
// the collection options per client type, the recurrence a schedule form sends, check-in ages, cancellable jobs.
import { describe, expect, it } from 'vitest'
import { ROLES } from '../../src/auth/permissions'
import { parseRrule } from '../../src/clients/rrule'
import { COLLECTION_OPTIONS } from '../../src/clients/jobs.store'
import {
  adminSections,
  checkinAge,
  chosenOptions,
  clientBody,
  clientJobStatusName,
  clientTypeLabel,
  collectionOptionsFor,
  defaultOptions,
  describeRrule,
  environmentLabel,
  jobCancellable,
  nextWholeHour,
  optionsBody,
  optionsSummary,
  scheduleFields,
  scheduleRrule,
} from '../../ui/src/pages/admin/model'

describe('who sees Collector clients', () => {
  it('only a role holding clients/Manage (Administrator), restricted to some environments or not', () => {
    expect(adminSections({ roles: ['Administrator'] }).find((s) => s.id === 'clients')).toEqual({ id: 'clients', label: 'Collector clients', group: 'Data collection' })
    expect(adminSections({ roles: ['Administrator'], all_environments: false }).map((s) => s.id)).toContain('clients')
    for (const role of ROLES.filter((r) => r !== 'Administrator')) expect(adminSections({ roles: [role] }).map((s) => s.id), role).not.toContain('clients')
    // a client token's service user is no person: its role shows nothing
    expect(adminSections({ roles: ['Collector'] })).toEqual([])
  })
})

describe('creating a client', () => {
  it('trims the fields; the domain controller only for SharpHound, null when blank', () => {
    expect(clientBody({ name: ' dc-collector ', type: 'sharphound', environment: ' S-1-5-21-1-2-3 ', domainController: ' dc01.corp.example ' })).toEqual({
      name: 'dc-collector',
      type: 'sharphound',
      environment_id: 'S-1-5-21-1-2-3',
      domain_controller: 'dc01.corp.example',
    })
    expect(clientBody({ name: 'a', type: 'sharphound', environment: 'e', domainController: '  ' }).domain_controller).toBeNull()
    expect(clientBody({ name: 'a', type: 'azurehound', environment: 'T', domainController: 'left over' }).domain_controller).toBeNull()
  })
  it('names types and what their environment field means', () => {
    expect(['sharphound', 'azurehound', 'openhound', 'other'].map(clientTypeLabel)).toEqual(['SharpHound', 'AzureHound', 'OpenHound', 'other'])
    expect(['sharphound', 'azurehound', 'openhound'].map(environmentLabel)).toEqual(['Domain SID', 'Tenant ID', 'Environment ID'])
  })
})

describe('collection options', () => {
  it('SharpHound takes every option the API stores; AzureHound and OpenHound none', () => {
    expect(collectionOptionsFor('sharphound').map((o) => o.key).sort()).toEqual([...COLLECTION_OPTIONS].sort())
    expect(collectionOptionsFor('azurehound')).toEqual([])
    expect(collectionOptionsFor('openhound')).toEqual([])
  })
  it('the body names every option of the type, true only when chosen; defaults leave out all trusted domains', () => {
    const chosen = new Set(['session_collection', 'ad_structure_collection'])
    const body = optionsBody('sharphound', chosen)
    expect(Object.keys(body).sort()).toEqual([...COLLECTION_OPTIONS].sort())
    expect(Object.entries(body).filter(([, v]) => v).map(([k]) => k).sort()).toEqual(['ad_structure_collection', 'session_collection'])
    expect(optionsBody('azurehound', chosen)).toEqual({})
    expect(defaultOptions('sharphound').has('all_trusted_domains')).toBe(false)
    expect(defaultOptions('sharphound').size).toBe(COLLECTION_OPTIONS.length - 1)
    expect(defaultOptions('openhound').size).toBe(0)
    expect(optionsSummary(body)).toBe('Sessions, AD structure')
    expect(optionsSummary({})).toBe('—')
  })
})

describe('schedules', () => {
  it('a form becomes a recurrence the API accepts, read as UTC', () => {
    const r = scheduleRrule({ frequency: 'DAILY', every: '2', start: '2026-12-01T02:30' })
    expect(r).toEqual({ rrule: 'DTSTART:20261201T023000Z RRULE:FREQ=DAILY;INTERVAL=2' })
    const parsed = parseRrule((r as { rrule: string }).rrule, 0)
    expect(parsed).toEqual({ startMs: Date.UTC(2026, 11, 1, 2, 30, 0), periodMs: 2 * 86_400_000 })
    expect(scheduleRrule({ frequency: 'WEEKLY', every: '1', start: '2026-12-01T02:30:15' })).toEqual({ rrule: 'DTSTART:20261201T023015Z RRULE:FREQ=WEEKLY;INTERVAL=1' })
  })
  it('refuses what the API would refuse, with the field to fix', () => {
    for (const every of ['0', '1001', '1.5', '', 'x']) expect(scheduleRrule({ frequency: 'HOURLY', every, start: '2026-12-01T02:30' }), every).toHaveProperty('error')
    expect(scheduleRrule({ frequency: 'HOURLY', every: '1', start: '' })).toEqual({ error: 'Choose the first run (date and time, UTC).' })
  })
  it('describes a recurrence in words; text it does not know is shown as it is', () => {
    expect(describeRrule('DTSTART:20261201T023000Z RRULE:FREQ=DAILY;INTERVAL=2')).toBe('Every 2 days from 2026-12-01 02:30 UTC')
    expect(describeRrule('RRULE:FREQ=HOURLY')).toBe('Every hour')
    expect(describeRrule('RRULE:FREQ=WEEKLY;INTERVAL=1')).toBe('Every week')
    expect(describeRrule('something else')).toBe('something else')
  })
  it('the first run defaults to the next whole hour (UTC, datetime-local format)', () => {
    expect(nextWholeHour(new Date('2026-11-29T10:41:07Z'))).toBe('2026-11-29T11:00')
    expect(nextWholeHour(new Date('2026-12-31T23:59:00Z'))).toBe('2027-01-01T00:00')
  })
  it("an Edit form starts from the stored schedule's recurrence, and saving it unchanged sends the same recurrence", () => {
    for (const rrule of ['DTSTART:20261201T023000Z RRULE:FREQ=DAILY;INTERVAL=2', 'DTSTART:20261201T023015Z RRULE:FREQ=WEEKLY;INTERVAL=1']) {
      const f = scheduleFields({ rrule, next_run: '2026-12-03T02:30:00.000Z' })!
      expect(scheduleRrule(f)).toEqual({ rrule })
    }
    expect(scheduleFields({ rrule: 'DTSTART:20261201T023000Z RRULE:FREQ=DAILY;INTERVAL=2', next_run: 'x' })).toEqual({ frequency: 'DAILY', every: '2', start: '2026-12-01T02:30' })
    expect(scheduleFields({ rrule: 'DTSTART:20261201T023015Z\nRRULE:FREQ=HOURLY', next_run: 'x' })).toEqual({ frequency: 'HOURLY', every: '1', start: '2026-12-01T02:30:15' })
    // without DTSTART (made through the API): the next run, an occurrence of the same series
    expect(scheduleFields({ rrule: 'RRULE:FREQ=HOURLY;INTERVAL=3', next_run: '2026-12-01T05:00:00.000Z' })).toEqual({ frequency: 'HOURLY', every: '3', start: '2026-12-01T05:00' })
    expect(scheduleFields({ rrule: 'RRULE:FREQ=hourly', next_run: '2026-12-01T05:00:07.000Z' })).toEqual({ frequency: 'HOURLY', every: '1', start: '2026-12-01T05:00:07' })
    // a recurrence the form cannot show
    expect(scheduleFields({ rrule: 'RRULE:FREQ=MONTHLY', next_run: '2026-12-01T05:00:00.000Z' })).toBeNull()
    expect(scheduleFields({ rrule: 'RRULE:FREQ=DAILYX', next_run: '2026-12-01T05:00:00.000Z' })).toBeNull()
  })
  it("an Edit form's options are the stored ones the client type takes", () => {
    const stored = Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, o === 'session_collection' || o === 'all_trusted_domains']))
    expect([...chosenOptions('sharphound', stored)].sort()).toEqual(['all_trusted_domains', 'session_collection'])
    expect(chosenOptions('azurehound', stored).size).toBe(0)
    expect(optionsBody('sharphound', chosenOptions('sharphound', stored))).toEqual(stored)
  })
})

describe('clients and jobs as shown', () => {
  it('check-in age in words; older than the 10-minute timeout (or never) is stale', () => {
    const now = new Date('2026-11-29T12:00:00Z')
    expect(checkinAge(null, now)).toEqual({ text: 'never', stale: true })
    expect(checkinAge('2026-11-29T11:59:55Z', now)).toEqual({ text: '5 s ago', stale: false })
    expect(checkinAge('2026-11-29T11:50:30Z', now)).toEqual({ text: '9 min ago', stale: false })
    expect(checkinAge('2026-11-29T11:49:00Z', now)).toEqual({ text: '11 min ago', stale: true })
    expect(checkinAge('2026-11-27T12:00:00Z', now).text).toBe('2 d ago')
  })
  it("names the API's job statuses; only ready, running and ingesting jobs can be canceled", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 8].map(clientJobStatusName)).toEqual(['Ready', 'Running', 'Complete', 'Canceled', 'Timed out', 'Failed', 'Ingesting', 'Partially complete'])
    expect([0, 1, 2, 3, 4, 5, 6, 8].filter(jobCancellable)).toEqual([0, 1, 6])
  })
})
