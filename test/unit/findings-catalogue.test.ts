/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest'
import doc from '../../docs/findings.md?raw'
import { ASSET_NAMES, BUILTIN_FINDINGS, allFindingDefs, findFindingDef } from '../../src/findings/catalogue'
import { KNOWN_CATALOG, GH_REMEDIATION } from '../fixtures/findings/known-graph'

const T0_KINDS = [
  'GenericAll', 'GenericWrite', 'WriteDacl', 'WriteOwner', 'Owns', 'AddMember', 'ForceChangePassword', 'AllExtendedRights',
  'DCSync', 'AdminTo',
  // derived by the ADCS and NTLM relay post-processing
  'GoldenCert', 'ADCSESC1', 'ADCSESC3', 'ADCSESC4', 'ADCSESC6a', 'ADCSESC6b', 'ADCSESC9a', 'ADCSESC9b', 'ADCSESC10a', 'ADCSESC10b',
  'ADCSESC13', 'ADCSESC16', 'CoerceAndRelayNTLMToSMB', 'CoerceAndRelayNTLMToLDAP', 'CoerceAndRelayNTLMToLDAPS', 'CoerceAndRelayNTLMToADCS',
  'AZOwns', 'AZAddSecret', 'AZAddOwner', 'AZResetPassword', 'AZAddMembers',
]

/** The doc quotes each text as a Markdown block quote. */
const quoted = (text: string) => text.split('\n').map((l) => (l ? `> ${l}` : '>')).join('\n')

describe('finding catalogue', () => {
  it('has exactly the issue’s built-in types: T0<kind> for the 31 edge kinds, Kerberoasting, ASREPRoasting', () => {
    expect(BUILTIN_FINDINGS.map((d) => d.type)).toEqual([...T0_KINDS.map((k) => `T0${k}`), 'Kerberoasting', 'ASREPRoasting'])
    for (const d of BUILTIN_FINDINGS) {
      if (d.type.startsWith('T0')) expect(d).toMatchObject({ shape: 'relationship', edgeKind: d.type.slice(2) })
      else expect(d.shape).toBe('list')
    }
  })

  it('every built-in type has a title and the four remediation texts', () => {
    for (const d of BUILTIN_FINDINGS) {
      for (const k of ['title', 'short_description', 'long_description', 'short_remediation', 'long_remediation'] as const) {
        expect(d[k].trim().length, `${d.type}.${k}`).toBeGreaterThan(10)
      }
      expect(d.title).not.toContain('\n')
    }
    expect(ASSET_NAMES).toEqual(['title', 'short_description', 'short_remediation', 'long_remediation'])
  })

  it('docs/findings.md lists every type with its title and all four texts, verbatim', () => {
    for (const d of BUILTIN_FINDINGS) {
      expect(doc, d.type).toContain(`### \`${d.type}\``)
      for (const k of ['title', 'short_description', 'long_description', 'short_remediation', 'long_remediation'] as const) {
        expect(doc, `${d.type}.${k}`).toContain(quoted(d[k]))
      }
    }
  })

  it('extension relationship findings come from the kind catalogue; built-ins win a name clash', () => {
    const defs = allFindingDefs(KNOWN_CATALOG)
    const gh = defs.find((d) => d.type === 'GH_T0AdminOf')!
    expect(gh).toMatchObject({
      shape: 'relationship',
      edgeKind: 'GH_AdminOf',
      environmentKind: 'GH_Organization',
      source: 'extension',
      title: 'Non Tier Zero Administrators of Tier Zero Repositories',
      ...GH_REMEDIATION,
    })
    const clash = { relationshipFindings: [{ ...KNOWN_CATALOG.relationshipFindings[0], name: 'T0GenericAll', displayName: 'evil' }] }
    expect(findFindingDef('T0GenericAll', clash)!.title).toBe(BUILTIN_FINDINGS[0].title)
    expect(allFindingDefs(clash).filter((d) => d.type === 'T0GenericAll')).toHaveLength(1)
    expect(findFindingDef('Nope', KNOWN_CATALOG)).toBeUndefined()
  })
})
