/**
 * The console's pre-built queries (ui/src/pages/explore/prebuilt-queries.ts) all run on EdgeHound's Cypher engine:
 * each is sent through POST /api/v2/graphs/cypher (the typed client) against a small graph built so that most
 * of them find something, and none may answer an error (a 400 from the parser or a budget, a 5xx). Nothing
 * found is BloodHound's 404 `resource not found`, which the console shows as "no results"; the questions analysts
 * ask first (Domain Admins, Kerberoastable, AS-REP roastable, unconstrained delegation, DCSync, shortest paths
 * to Domain Admins and Tier Zero, Global Administrators) must find their objects here.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { allPrebuilt, filterPrebuilt, PREBUILT_QUERIES } from '../../ui/src/pages/explore/prebuilt-queries'

const D = 'S-1-5-21-4242'
const T = 'T-PREBUILT'
const OLD = Math.floor(Date.now() / 1000) - 500 * 86400
const ad = (id: string, kind: string, name: string, props: Record<string, unknown> = {}) => ({
  id,
  kinds: [kind],
  properties: { name, domainsid: D, domain: 'PREBUILT.LOCAL', ...props },
})
const az = (id: string, kind: string, name: string) => ({ id, kinds: [kind], properties: { name, tenantid: T } })

const NODES = [
  ad(D, 'Domain', 'PREBUILT.LOCAL'),
  ad('S-1-5-21-9999', 'Domain', 'FOREIGN.LOCAL', { domainsid: 'S-1-5-21-9999' }),
  ad(`${D}-512`, 'Group', 'DOMAIN ADMINS@PREBUILT.LOCAL', { system_tags: 'admin_tier_0' }),
  ad(`${D}-513`, 'Group', 'DOMAIN USERS@PREBUILT.LOCAL'),
  ad(`${D}-516`, 'Group', 'DOMAIN CONTROLLERS@PREBUILT.LOCAL'),
  ad(`${D}-519`, 'Group', 'ENTERPRISE ADMINS@PREBUILT.LOCAL'),
  ad(`${D}-1100`, 'Group', 'HELPDESK@PREBUILT.LOCAL'),
  ad(`${D}-1101`, 'User', 'SVC_SQL@PREBUILT.LOCAL', { enabled: true, hasspn: true, pwdlastset: OLD, pwdneverexpires: true }),
  ad(`${D}-1102`, 'User', 'ROAST@PREBUILT.LOCAL', { enabled: true, dontreqpreauth: true, system_tags: 'owned' }),
  ad(`${D}-1103`, 'User', 'ADMIN.BOB@PREBUILT.LOCAL', { enabled: true }),
  ad(`${D}-1104`, 'User', 'GMSA_WEB$@PREBUILT.LOCAL', { enabled: true }),
  ad(`${D}-1000`, 'Computer', 'DC01.PREBUILT.LOCAL', { operatingsystem: 'Windows Server 2022', unconstraineddelegation: true }),
  ad(`${D}-1201`, 'Computer', 'WEB01.PREBUILT.LOCAL', { operatingsystem: 'Windows Server 2008 R2', unconstraineddelegation: true, haslaps: false, enabled: true }),
  ad(`${D}-1202`, 'Computer', 'APP01.PREBUILT.LOCAL', { operatingsystem: 'Windows Server 2019', haslaps: true }),
  ad('GPO-1', 'GPO', 'DEFAULT POLICY@PREBUILT.LOCAL'),
  ad('ECA-1', 'EnterpriseCA', 'PREBUILT-CA@PREBUILT.LOCAL'),
  ad('TPL-1', 'CertTemplate', 'USERAUTH@PREBUILT.LOCAL'),
  ad('S-1-5-21-9999-1105', 'User', 'VISITOR@FOREIGN.LOCAL', { domainsid: 'S-1-5-21-9999', enabled: true }),
  az(T, 'AZTenant', 'PREBUILT TENANT'),
  az('AZ-GA', 'AZRole', 'GLOBAL ADMINISTRATOR@PREBUILT TENANT'),
  az('AZ-PRA', 'AZRole', 'PRIVILEGED ROLE ADMINISTRATOR@PREBUILT TENANT'),
  az('AZ-ADMINS', 'AZGroup', 'CLOUD ADMINS@PREBUILT TENANT'),
  az('AZ-U1', 'AZUser', 'CLOUDY@PREBUILT TENANT'),
  az('AZ-U2', 'AZUser', 'HYBRID@PREBUILT TENANT'),
  az('AZ-APP', 'AZApp', 'PAYROLL APP'),
]
const EDGES: [string, string, string][] = [
  [`${D}-1103`, 'MemberOf', `${D}-512`],
  [`${D}-1100`, 'MemberOf', `${D}-519`],
  [`${D}-1101`, 'MemberOf', `${D}-513`],
  [`${D}-1102`, 'MemberOf', `${D}-1100`],
  [`${D}-1000`, 'MemberOf', `${D}-516`],
  [`${D}-1000`, 'HasSession', `${D}-1103`],
  [`${D}-1201`, 'HasSession', `${D}-1101`],
  [`${D}-513`, 'CanRDP', `${D}-1201`],
  [`${D}-513`, 'AdminTo', `${D}-1202`],
  [`${D}-1100`, 'GenericAll', `${D}-1103`],
  [`${D}-1101`, 'AdminTo', `${D}-1201`],
  [`${D}-1100`, 'GenericWrite', 'GPO-1'],
  [`${D}-1100`, 'ReadLAPSPassword', `${D}-1202`],
  [`${D}-1100`, 'ReadGMSAPassword', `${D}-1104`],
  [`${D}-1100`, 'AllowedToDelegate', `${D}-1202`],
  [`${D}-1201`, 'AllowedToAct', `${D}-1202`],
  [`${D}-1103`, 'DCSync', D],
  [D, 'SameForestTrust', 'S-1-5-21-9999'],
  ['S-1-5-21-9999-1105', 'MemberOf', `${D}-1100`],
  ['TPL-1', 'PublishedTo', 'ECA-1'],
  [`${D}-513`, 'Enroll', 'TPL-1'],
  [`${D}-1100`, 'ADCSESC1', D],
  ['AZ-U1', 'AZMemberOf', 'AZ-ADMINS'],
  ['AZ-ADMINS', 'AZHasRole', 'AZ-GA'],
  ['AZ-U2', 'AZHasRole', 'AZ-PRA'],
  ['AZ-U1', 'AZOwns', 'AZ-APP'],
  [`${D}-1101`, 'SyncedToEntraUser', 'AZ-U2'],
]

/** The questions that must find their objects on this graph (by query name → a name expected in the answer). */
const MUST_FIND: Record<string, string> = {
  'Members of Domain Admins': 'ADMIN.BOB@PREBUILT.LOCAL',
  'Kerberoastable users': 'SVC_SQL@PREBUILT.LOCAL',
  'AS-REP roastable users': 'ROAST@PREBUILT.LOCAL',
  'Unconstrained delegation': 'WEB01.PREBUILT.LOCAL',
  'DCSync rights': 'ADMIN.BOB@PREBUILT.LOCAL',
  'Shortest paths to Domain Admins': 'HELPDESK@PREBUILT.LOCAL',
  'Shortest paths to Tier Zero': 'ROAST@PREBUILT.LOCAL',
  'Global Administrators': 'CLOUDY@PREBUILT TENANT',
  'Shortest paths to Global Administrator': 'CLOUDY@PREBUILT TENANT',
  'Owned objects': 'ROAST@PREBUILT.LOCAL',
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: { nodes: NODES, edges: EDGES.map(([a, kind, b]) => ({ start: { value: a }, end: { value: b }, kind })) },
  })
})

describe('console pre-built queries (ui/src/pages/explore/prebuilt-queries.ts)', () => {
  it('the list covers the common questions, grouped by category, with unique names', () => {
    const all = allPrebuilt()
    expect(all.length).toBeGreaterThanOrEqual(30)
    expect(new Set(all.map((x) => x.name)).size).toBe(all.length)
    for (const name of Object.keys(MUST_FIND)) expect(all.map((x) => x.name)).toContain(name)
    for (const c of PREBUILT_QUERIES) expect(c.queries.length).toBeGreaterThan(0)
    expect(filterPrebuilt('kerberoast').flatMap((c) => c.queries.map((x) => x.name))).toEqual(['Kerberoastable users', 'Kerberoastable members of Tier Zero', 'Shortest paths from Kerberoastable users'])
    expect(filterPrebuilt('')).toBe(PREBUILT_QUERIES)
  })

  it('every query runs without an error (200, or 404 "resource not found" when nothing matches)', async () => {
    const failures: string[] = []
    const found = new Map<string, string[]>()
    for (const p of allPrebuilt()) {
      const res = await admin.raw('POST', '/api/v2/graphs/cypher', { query: p.query, include_properties: false })
      const body = (await res.json()) as { data?: { nodes: Record<string, { label: string }> }; errors?: { message: string }[] }
      if (res.status === 200) found.set(p.name, Object.values(body.data!.nodes).map((n) => n.label))
      else if (!(res.status === 404 && body.errors?.[0]?.message === 'resource not found')) failures.push(`${p.name}: ${res.status} ${body.errors?.map((e) => e.message).join('; ')}`)
    }
    expect(failures).toEqual([])
    for (const [name, want] of Object.entries(MUST_FIND)) expect(found.get(name) ?? [], name).toContain(want)
    // most of the list finds something on this graph (a query that never matches anything would go unnoticed)
    expect(found.size).toBeGreaterThanOrEqual(Math.ceil(allPrebuilt().length * 0.8))
  })
})
