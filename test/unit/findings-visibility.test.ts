import { describe, expect, it } from 'vitest'
import { endVisible } from '../../src/findings/visibility'
import { detailItem } from '../../src/findings/details'
import type { DetailRow } from '../../src/findings/findings.store'

const CORP = 'S-1-5-21-1'
const DEV = 'S-1-5-21-2'
const restricted = { all: false as const, ids: [CORP] }
const all = { all: true as const }

describe('endVisible: which end of a finding a restricted caller may see', () => {
  it('every end for a caller who sees every environment', () => {
    for (const anchor of [true, false]) {
      expect(endVisible(all, { exists: true, environmentId: DEV }, anchor)).toBe(true)
      expect(endVisible(all, { exists: false, environmentId: null }, anchor)).toBe(true)
    }
  })
  it('an end in one of the caller’s environments, never one in another environment or in none', () => {
    for (const anchor of [true, false]) {
      expect(endVisible(restricted, { exists: true, environmentId: CORP }, anchor)).toBe(true)
      expect(endVisible(restricted, { exists: true, environmentId: DEV }, anchor)).toBe(false)
      expect(endVisible(restricted, { exists: true, environmentId: null }, anchor)).toBe(false)
    }
  })
  it('a vanished node: the anchor end stays visible, a source is hidden', () => {
    expect(endVisible(restricted, { exists: false, environmentId: null }, true)).toBe(true)
    expect(endVisible(restricted, { exists: false, environmentId: null }, false)).toBe(false)
  })
})

describe('detailItem with a hidden source', () => {
  const row: DetailRow = {
    id: 7, finding: 'T0WriteDacl', shape: 'relationship', environment_id: CORP, from_objectid: `${DEV}-1105`, to_objectid: `${CORP}-512`,
    rel_kind: 'WriteDacl', from_kind: 'User', from_name: 'SNAP@DEV', to_kind: 'Group', to_name: 'DA@CORP', impact_count: 1, exposure_count: 2,
    principal_count: 3, impact_percentage: 0.3, exposure_percentage: 0.6, severity: 'low', accepted: 0, accepted_until: null,
    created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', deleted_at: null, accepted_now: 0,
    fn_kind: 'User', fn_name: 'U@DEV', fn_props: '{"secret":"x"}', fn_env: DEV, fn_env_name: 'DEV', tn_kind: 'Group', tn_name: 'DA@CORP',
    tn_props: '{}', tn_env: CORP, tn_env_name: 'CORP', env_name: 'CORP', edge_id: 9, edge_props: '{"isinherited":true}',
  }
  it('is opaque for the restricted caller and complete for the others; every field keeps its type', () => {
    const r = detailItem(row, restricted)
    expect(JSON.stringify(r)).not.toMatch(/DEV|SNAP|secret/)
    expect(r).toMatchObject({ FromPrincipal: '', FromPrincipalProps: { objectid: '', name: '' }, ToPrincipal: `${CORP}-512`, RelProps: {}, IsInherited: false })
    const a = detailItem(row, all)
    expect(a).toMatchObject({ FromPrincipal: `${DEV}-1105`, FromEnvironment: 'DEV', IsInherited: true, ComboGraphRelationID: { int64: 9, valid: true } })
    expect(Object.keys(r).sort()).toEqual(Object.keys(a).sort())
    for (const k of Object.keys(a)) expect(typeof r[k]).toBe(typeof a[k])
  })
})
