import { describe, expect, it } from 'vitest'
import { BUILTIN_RELATIONSHIPS } from '../../src/graph/kinds'
import { bloodhoundEdgePage, DESCRIBED_KINDS, relationshipHelp } from '../../ui/src/help/relationships'

/**
 * The console's relationship help (ui/src/help/relationships.ts) against the project's own list of relationship
 * kinds (src/graph/kinds.ts: every Active Directory and Azure kind, collected or derived by post-processing).
 * A kind added to that list without help text fails here.
 */
describe('console relationship help', () => {
  const kinds = [...BUILTIN_RELATIONSHIPS.keys()]

  it.each(kinds)('%s has its own text in every section', (kind) => {
    const h = relationshipHelp(kind)
    expect(h.known, `${kind} has no entry in ui/src/help/relationships.ts`).toBe(true)
    expect(h.kind).toBe(kind)
    for (const section of ['meaning', 'abuse', 'opsec'] as const) expect(h[section].trim().length, `${kind}.${section}`).toBeGreaterThan(20)
    expect(h.references.length).toBeGreaterThan(1)
    for (const url of h.references) expect(url).toMatch(/^https:\/\/[a-z0-9.-]+\/\S+$/)
  })

  it('describes only kinds the project knows (no stale entry for a renamed kind)', () => {
    expect(DESCRIBED_KINDS.filter((k) => !BUILTIN_RELATIONSHIPS.has(k))).toEqual([])
  })

  it('no two kinds share the same meaning text', () => {
    const meanings = kinds.map((k) => relationshipHelp(k).meaning)
    expect(new Set(meanings).size).toBe(meanings.length)
  })

  it('an unknown or extension kind gets the generic text, named after the kind; inherited names are not kinds', () => {
    for (const kind of ['GH_CanPush', 'toString', 'constructor', '']) {
      const h = relationshipHelp(kind)
      expect(h.known).toBe(false)
      expect(h.meaning).toContain(`"${kind}"`)
      for (const section of ['abuse', 'opsec'] as const) expect(h[section].length).toBeGreaterThan(0)
      expect(h.references.length).toBeGreaterThan(0)
    }
  })

  it("links BloodHound's edge page by the kind in kebab case", () => {
    expect(bloodhoundEdgePage('GenericAll')).toBe('https://bloodhound.specterops.io/resources/edges/generic-all')
    expect(bloodhoundEdgePage('ADCSESC1')).toBe('https://bloodhound.specterops.io/resources/edges/adcs-esc1')
    expect(bloodhoundEdgePage('AZAddMembers')).toBe('https://bloodhound.specterops.io/resources/edges/az-add-members')
    expect(bloodhoundEdgePage('CoerceAndRelayNTLMToSMB')).toBe('https://bloodhound.specterops.io/resources/edges/coerce-and-relay-ntlm-to-smb')
  })
})
