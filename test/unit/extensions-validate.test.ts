import { describe, expect, it } from 'vitest'
import type { LoadedKindCatalog } from '../../src/extensions/catalog'
import { deletionBlockers, EMPTY_INSTALLED, installedState, isReservedNamespace, isSemver } from '../../src/extensions/rules'
import { validateExtension, MAX_DETAILS } from '../../src/extensions/validate'
import { clone, GITHUB, REMEDIATION, smallDoc } from '../fixtures/extensions/docs'

type Detail = { context: string; message: string }

function errorsOf(raw: unknown, installed = EMPTY_INSTALLED): Detail[] {
  const r = validateExtension(raw, installed)
  if (r.ok) throw new Error('expected the payload to be invalid')
  return r.errors
}

/** Asserts exactly one violation at `context` whose message contains `message`. */
function expectOnly(raw: unknown, context: string, message: string | RegExp, installed = EMPTY_INSTALLED) {
  const errs = errorsOf(raw, installed)
  expect(errs, JSON.stringify(errs)).toHaveLength(1)
  expect(errs[0].context).toBe(context)
  if (typeof message === 'string') expect(errs[0].message).toContain(message)
  else expect(errs[0].message).toMatch(message)
}

function mutate(f: (d: Record<string, any>) => void, base: unknown = smallDoc('Ext', 'EX')): Record<string, any> {
  const d = clone(base) as Record<string, any>
  f(d)
  return d
}

/** A catalogue with AD-like built-ins and one installed extension `Other` (namespace OT). */
function fakeCatalog(): LoadedKindCatalog {
  const ext = (id: number, name: string, displayName: string, isBuiltin: boolean) => ({ id, name, displayName, namespace: name, version: '1.0.0', isBuiltin })
  return {
    nodeKinds: new Set(['User', 'Domain', 'OT_Tenant', 'OT_User']),
    nodeKindInfo: new Map([
      ['User', { extensionName: 'AD', displayName: 'User', isDisplayKind: true, icon: null, color: null }],
      ['Domain', { extensionName: 'AD', displayName: 'Domain', isDisplayKind: true, icon: null, color: null }],
      ['OT_Tenant', { extensionName: 'Other', displayName: 'Tenant', isDisplayKind: true, icon: null, color: null }],
      ['OT_User', { extensionName: 'Other', displayName: 'User', isDisplayKind: true, icon: null, color: null }],
    ]),
    relationshipKinds: new Map([
      ['MemberOf', { traversable: true, extensionName: 'AD' }],
      ['AZMG_Read_All', { traversable: false, extensionName: 'AD' }],
      ['OT_AdminOf', { traversable: true, extensionName: 'Other' }],
    ]),
    environments: [
      { environmentKind: 'Domain', sourceKind: 'Base', principalKinds: ['User'], extensionName: 'AD', extensionDisplayName: 'Active Directory', isBuiltin: true },
      { environmentKind: 'OT_Tenant', sourceKind: 'OtherSrc', principalKinds: ['OT_User'], extensionName: 'Other', extensionDisplayName: 'Other Graph', isBuiltin: false },
    ],
    relationshipFindings: [
      { name: 'OT_Admins', displayName: 'Admins', relationshipKind: 'OT_AdminOf', environmentKind: 'OT_Tenant', remediation: REMEDIATION, extensionName: 'Other' },
    ],
    version: 'v',
    extensions: [ext(1, 'AD', 'Active Directory', true), ext(3, 'Other', 'Other Graph', false)],
  }
}

describe('valid documents', () => {
  it('the realistic GitHub extension and the small one validate, unchanged', () => {
    for (const doc of [GITHUB, smallDoc('Ext', 'EX')]) {
      const r = validateExtension(clone(doc), EMPTY_INSTALLED)
      expect(r.ok).toBe(true)
      if (r.ok) expect(r.doc).toEqual(doc)
    }
  })

  it('optional members may be absent or null (null reads as absent); optional arrays default to []', () => {
    const r = validateExtension(
      { schema: { name: 'M', version: 'v2.0.0', namespace: 'M', display_name: null }, node_kinds: [{ name: 'M_A', icon: null, color: null, description: null }], environments: null },
      EMPTY_INSTALLED,
    )
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.doc.node_kinds[0]).toEqual({ name: 'M_A', icon: undefined, color: undefined, description: undefined })
    expect(r.doc.schema.display_name).toBeUndefined()
    expect(r.doc.relationship_kinds).toEqual([])
    expect(r.doc.environments).toEqual([])
    expect(r.doc.relationship_findings).toEqual([])
  })

  it('an update of an installed extension may keep its own kinds, environments and findings', () => {
    const inst = installedState(fakeCatalog())
    const d = smallDoc('Other', 'OT')
    expect(validateExtension(d, inst).ok).toBe(true)
  })

  it('a finding may use an installed extension’s environment, built-in or not', () => {
    const inst = installedState(fakeCatalog())
    for (const env of ['Domain', 'OT_Tenant']) {
      const d = mutate((x) => (x.relationship_findings[0].environment_kind = env))
      expect(validateExtension(d, inst).ok, env).toBe(true)
    }
  })

  it('empty icon and colour mean none and are kept', () => {
    const d = mutate((x) => Object.assign(x.node_kinds[0], { icon: '', color: '' }))
    const r = validateExtension(d, EMPTY_INSTALLED)
    expect(r.ok && r.doc.node_kinds[0]).toMatchObject({ icon: '', color: '' })
  })
})

describe('the body itself', () => {
  it.each([
    [null, 'not null'],
    [[], 'not an array'],
    ['text', 'not a string'],
    [42, 'not a number'],
    [true, 'not a boolean'],
  ])('%j is not an object', (raw, what) => {
    expectOnly(raw, 'body', `the request body must be a JSON object (a graph extension document), ${what}`)
  })

  it('an empty object lists every missing required member', () => {
    expect(errorsOf({})).toEqual([
      { context: 'schema', message: 'is required' },
      { context: 'node_kinds', message: 'is required' },
    ])
  })

  it('unknown members are named with their path', () => {
    const d = mutate((x) => {
      x.extra = 1
      x.schema.author = 'me'
      x.node_kinds[1].colour = '#fff'
      x.relationship_findings[0].remediation.notes = 'n'
    })
    // document order; members the format does not know come last
    expect(errorsOf(d)).toEqual([
      { context: 'schema.author', message: 'unknown member "author"' },
      { context: 'node_kinds[1].colour', message: 'unknown member "colour"' },
      { context: 'relationship_findings[0].remediation.notes', message: 'unknown member "notes"' },
      { context: 'extra', message: 'unknown member "extra"' },
    ])
  })
})

describe('schema rules', () => {
  it.each([
    [(x: any) => delete x.schema.name, 'schema.name', 'is required'],
    [(x: any) => (x.schema.name = '   '), 'schema.name', 'must not be blank'],
    [(x: any) => (x.schema.name = ' Ext'), 'schema.name', 'must not start or end with whitespace'],
    [(x: any) => (x.schema.name = 'x'.repeat(129)), 'schema.name', 'at most 128 characters'],
    [(x: any) => (x.schema.name = 7), 'schema.name', 'must be a string, not number'],
    [(x: any) => delete x.schema.version, 'schema.version', 'is required'],
    [(x: any) => (x.schema.version = ''), 'schema.version', 'must not be blank'],
    [(x: any) => (x.schema.version = '1.0'), 'schema.version', '"1.0" is not a semantic version'],
    [(x: any) => (x.schema.version = 'version one'), 'schema.version', 'is not a semantic version'],
    [(x: any) => delete x.schema.namespace, 'schema.namespace', 'is required'],
    [(x: any) => (x.schema.namespace = ' '), 'schema.namespace', 'must not be blank'],
    [(x: any) => (x.schema.display_name = 5), 'schema.display_name', 'must be a string, not number'],
  ])('%#: %s', (f, context, message) => {
    // only the schema member changes; kinds keep their EX_ prefix, which is fine for every case but namespace
    expectOnly(mutate(f), context, message)
  })

  it('semantic versions with or without v', () => {
    for (const v of ['1.0.0', 'v1.0.0', 'v0.0.1', '10.20.30', '1.2.3-beta.1', 'v1.2.3-rc.1+build.7', '1.0.0+20260101'])
      expect(isSemver(v), v).toBe(true)
    for (const v of ['1', '1.0', 'v1', '01.0.0', '1.0.0.0', 'V1.0.0', 'vv1.0.0', '1.0.0-', '1.0.0-01', ' 1.0.0', 'latest'])
      expect(isSemver(v), v).toBe(false)
  })

  it.each(['tag', 'Tag', 'TAG', 'tag_x', 'Tag_Custom', 'TAG_A1'])('namespace %s is reserved', (ns) => {
    expect(isReservedNamespace(ns)).toBe(true)
    const d = smallDoc('Ext', ns)
    expectOnly(d, 'schema.namespace', `namespace "${ns}" uses the reserved namespace "tag"`)
  })

  it.each(['tags', 'Tagged', 'stag', 'TAGX'])('namespace %s is not reserved', (ns) => {
    expect(isReservedNamespace(ns)).toBe(false)
    expect(validateExtension(smallDoc('Ext', ns), EMPTY_INSTALLED).ok).toBe(true)
  })

  it('namespace character set', () => {
    const d = mutate((x) => (x.schema.namespace = 'E X'))
    const errs = errorsOf(d)
    expect(errs[0]).toEqual({ context: 'schema.namespace', message: 'must start with a letter and contain only letters, digits and single underscores between them' })
  })

  it('a built-in extension cannot be modified', () => {
    const d = smallDoc('AD', 'AD')
    expectOnly(d, 'schema.name', '"AD" is a built-in extension and cannot be modified', installedState(fakeCatalog()))
  })
})

describe('node and relationship kinds', () => {
  it('at least one node kind', () => {
    expectOnly(
      mutate((x) => {
        x.node_kinds = []
        x.environments = []
        x.relationship_findings = []
      }),
      'node_kinds',
      'at least one node kind is required',
    )
  })

  it.each([
    [(x: any) => (x.node_kinds[1].name = 'User'), 'node_kinds[1].name', 'node kind "User" must start with the namespace prefix "EX_"'],
    [(x: any) => (x.node_kinds[1].name = 'ex_User'), 'node_kinds[1].name', 'must start with the namespace prefix "EX_"'],
    [(x: any) => (x.node_kinds[1].name = 'EX_'), 'node_kinds[1].name', 'node kind "EX_" needs a name after the namespace prefix "EX_"'],
    [(x: any) => (x.node_kinds[1].name = 'EX_Us er'), 'node_kinds[1].name', 'may contain only letters, digits and underscores'],
    [(x: any) => (x.node_kinds[1].name = ''), 'node_kinds[1].name', 'must not be blank'],
    [(x: any) => delete x.node_kinds[1].name, 'node_kinds[1].name', 'is required'],
    [(x: any) => (x.node_kinds[1].color = 'red'), 'node_kinds[1].color', 'must be a hex colour of the form #RGB or #RRGGBB'],
    [(x: any) => (x.node_kinds[1].color = '#12'), 'node_kinds[1].color', '#RGB or #RRGGBB'],
    [(x: any) => (x.node_kinds[1].color = '#1234'), 'node_kinds[1].color', '#RGB or #RRGGBB'],
    [(x: any) => (x.node_kinds[1].color = '#GGGGGG'), 'node_kinds[1].color', '#RGB or #RRGGBB'],
    [(x: any) => (x.node_kinds[1].icon = '<svg onload=x>'), 'node_kinds[1].icon', 'must be a short identifier'],
    [(x: any) => (x.node_kinds[1].icon = 'a'.repeat(65)), 'node_kinds[1].icon', 'at most 64 characters'],
    [(x: any) => (x.node_kinds[1].is_display_kind = 'yes'), 'node_kinds[1].is_display_kind', 'must be a boolean, not string'],
    [(x: any) => (x.node_kinds[1].display_name = 'x'.repeat(257)), 'node_kinds[1].display_name', 'at most 256 characters'],
    [(x: any) => (x.node_kinds[1].description = 'x'.repeat(4097)), 'node_kinds[1].description', 'at most 4096 characters'],
    [(x: any) => (x.node_kinds[1].description = 'bell\u0007'), 'node_kinds[1].description', 'must not contain control characters'],
    [(x: any) => (x.node_kinds[1] = 'EX_User'), 'node_kinds[1]', 'must be an object, not string'],
    [(x: any) => (x.relationship_kinds[0].name = 'AdminOf'), 'relationship_kinds[0].name', 'relationship kind "AdminOf" must start with the namespace prefix "EX_"'],
    [(x: any) => delete x.relationship_kinds[0].is_traversable, 'relationship_kinds[0].is_traversable', 'is required'],
    [(x: any) => (x.relationship_kinds[0].is_traversable = 1), 'relationship_kinds[0].is_traversable', 'must be a boolean, not number'],
  ])('%#: %s', (f, context, message) => {
    const d = mutate(f)
    // keep references valid so that only the one rule fires
    if (typeof d.node_kinds[1] !== 'object' || d.node_kinds[1].name !== 'EX_User') d.environments[0].principal_kinds = []
    if (d.relationship_kinds[0].name !== 'EX_AdminOf') d.relationship_findings = []
    expectOnly(d, context, message)
  })

  it('colour accepts #RGB and #RRGGBB in any case', () => {
    for (const c of ['#abc', '#ABC', '#a1B2c3', '#000000'])
      expect(validateExtension(mutate((x) => (x.node_kinds[0].color = c)), EMPTY_INSTALLED).ok, c).toBe(true)
  })

  it('kind names are unique across node and relationship kinds', () => {
    const d = mutate((x) => {
      x.node_kinds.push({ name: 'EX_User' })
      x.relationship_kinds.push({ name: 'EX_Tenant', is_traversable: false })
    })
    expect(errorsOf(d)).toEqual([
      { context: 'node_kinds[2].name', message: 'duplicate kind name "EX_User": already declared at node_kinds[1]' },
      { context: 'relationship_kinds[1].name', message: 'duplicate kind name "EX_Tenant": already declared at node_kinds[0]' },
    ])
  })

  it('a kind of another installed extension is refused, naming that extension (built-ins included)', () => {
    const inst = installedState(fakeCatalog())
    const d = smallDoc('Mine', 'OT')
    d.node_kinds.push({ name: 'OT_Group' })
    const errs = errorsOf(d, inst)
    expect(errs).toContainEqual({ context: 'node_kinds[0].name', message: 'kind "OT_Tenant" already belongs to the installed extension "Other" (Other Graph)' })
    expect(errs).toContainEqual({ context: 'node_kinds[1].name', message: 'kind "OT_User" already belongs to the installed extension "Other" (Other Graph)' })
    expect(errs).toContainEqual({ context: 'relationship_kinds[0].name', message: 'kind "OT_AdminOf" already belongs to the installed extension "Other" (Other Graph)' })
    expect(errs).toContainEqual({ context: 'relationship_findings[0].name', message: 'relationship finding "OT_Admins" already belongs to the installed extension "Other" (Other Graph)' })
    expect(errs.map((e) => e.context)).not.toContain('node_kinds[2].name')

    const b = smallDoc('Mine', 'AZMG')
    b.relationship_kinds.push({ name: 'AZMG_Read_All', is_traversable: true })
    expect(errorsOf(b, inst)).toEqual([
      { context: 'relationship_kinds[1].name', message: 'kind "AZMG_Read_All" already belongs to the built-in extension "AD" (Active Directory)' },
    ])
  })
})

describe('environments', () => {
  it.each([
    [(x: any) => (x.environments[0].environment_kind = 'EX_Nope'), 'environments[0].environment_kind', 'environment kind "EX_Nope" is not a node kind declared in this extension'],
    [(x: any) => (x.environments[0].environment_kind = 'EX_AdminOf'), 'environments[0].environment_kind', 'environment kind "EX_AdminOf" is a relationship kind; it must be a node kind declared in this extension'],
    [(x: any) => delete x.environments[0].environment_kind, 'environments[0].environment_kind', 'is required'],
    [(x: any) => (x.environments[0].source_kind = ' '), 'environments[0].source_kind', 'must not be blank'],
    [(x: any) => delete x.environments[0].source_kind, 'environments[0].source_kind', 'is required'],
    [(x: any) => (x.environments[0].source_kind = 'EX_Source'), 'environments[0].source_kind', 'source kind "EX_Source" must not start with the namespace prefix "EX_"'],
    [(x: any) => (x.environments[0].principal_kinds = ['EX_Ghost']), 'environments[0].principal_kinds[0]', 'principal kind "EX_Ghost" is not a node kind declared in this extension'],
    [(x: any) => (x.environments[0].principal_kinds = ['EX_User', 'EX_AdminOf']), 'environments[0].principal_kinds[1]', 'principal kind "EX_AdminOf" is a relationship kind'],
    [(x: any) => (x.environments[0].principal_kinds = ['EX_User', 'EX_User']), 'environments[0].principal_kinds[1]', 'duplicate principal kind "EX_User" in this environment'],
    [(x: any) => delete x.environments[0].principal_kinds, 'environments[0].principal_kinds', 'is required'],
    [(x: any) => (x.environments[0].principal_kinds = 'EX_User'), 'environments[0].principal_kinds', 'must be an array, not string'],
  ])('%#: %s', (f, context, message) => {
    const d = mutate(f)
    if (d.environments[0].environment_kind !== 'EX_Tenant') d.relationship_findings[0].environment_kind = 'EX_Tenant2'
    if (d.relationship_findings[0].environment_kind === 'EX_Tenant2') d.relationship_findings = []
    expectOnly(d, context, message)
  })

  it('a source kind may not be a kind of this extension (the prefix rule catches it first)', () => {
    const d = mutate((x) => (x.environments[0].source_kind = 'EX_User'))
    expectOnly(d, 'environments[0].source_kind', 'must not start with the namespace prefix')
  })

  it('environment kinds are unique', () => {
    const d = mutate((x) => x.environments.push({ environment_kind: 'EX_Tenant', source_kind: 'Other', principal_kinds: [] }))
    expectOnly(d, 'environments[1].environment_kind', 'duplicate environment kind "EX_Tenant": already declared at environments[0]')
  })

  it('an update may not remove an environment that another extension’s finding uses', () => {
    const cat = fakeCatalog()
    // a third extension's finding uses Other's environment
    cat.relationshipFindings.push({ name: 'TH_UsesOther', displayName: 'x', relationshipKind: 'TH_R', environmentKind: 'OT_Tenant', remediation: REMEDIATION, extensionName: 'Third' })
    const inst = installedState(cat)
    const d = mutate((x) => {
      x.environments = []
      x.relationship_findings = []
    }, smallDoc('Other', 'OT'))
    expectOnly(d, 'environments', 'environment "OT_Tenant" cannot be removed: relationship finding "TH_UsesOther" of the installed extension "Third" uses it', inst)
    expect(deletionBlockers('Other', inst)).toEqual(['environment "OT_Tenant" is used by relationship finding "TH_UsesOther" of the installed extension "Third"'])
    expect(deletionBlockers('Third', inst)).toEqual([])
  })
})

describe('relationship findings', () => {
  it.each([
    [(x: any) => (x.relationship_findings[0].name = 'Admins'), 'relationship_findings[0].name', 'relationship finding "Admins" must start with the namespace prefix "EX_"'],
    [(x: any) => (x.relationship_findings[0].name = 'EX_'), 'relationship_findings[0].name', 'needs a name after the namespace prefix'],
    [(x: any) => (x.relationship_findings[0].relationship_kind = 'EX_Nope'), 'relationship_findings[0].relationship_kind', 'relationship kind "EX_Nope" is not declared in this extension'],
    [(x: any) => (x.relationship_findings[0].relationship_kind = 'EX_User'), 'relationship_findings[0].relationship_kind', '"EX_User" is a node kind; relationship_kind must be a relationship kind declared in this extension'],
    [(x: any) => (x.relationship_findings[0].relationship_kind = 'MemberOf'), 'relationship_findings[0].relationship_kind', 'relationship kind "MemberOf" is not declared in this extension'],
    [(x: any) => (x.relationship_findings[0].environment_kind = 'EX_User'), 'relationship_findings[0].environment_kind', 'environment kind "EX_User" is not an environment of this extension or of any installed extension'],
    [(x: any) => delete x.relationship_findings[0].remediation, 'relationship_findings[0].remediation', 'is required'],
    [(x: any) => delete x.relationship_findings[0].remediation.long_remediation, 'relationship_findings[0].remediation.long_remediation', 'is required'],
    [(x: any) => (x.relationship_findings[0].remediation.short_description = ''), 'relationship_findings[0].remediation.short_description', 'must not be blank'],
    [(x: any) => (x.relationship_findings[0].remediation.short_remediation = 'x'.repeat(4097)), 'relationship_findings[0].remediation.short_remediation', 'at most 4096 characters'],
    [(x: any) => (x.relationship_findings[0].remediation.long_description = 'x'.repeat(32769)), 'relationship_findings[0].remediation.long_description', 'at most 32768 characters'],
    [(x: any) => (x.relationship_findings[0].remediation.long_remediation = 'See <script>alert(1)</script>'), 'relationship_findings[0].remediation.long_remediation', 'unsafe Markdown: contains a <script> element'],
    [(x: any) => (x.relationship_findings[0].remediation.short_remediation = '<img src=x onerror=alert(1)>'), 'relationship_findings[0].remediation.short_remediation', 'unsafe Markdown: contains an event-handler attribute (onerror=)'],
    [(x: any) => (x.relationship_findings[0].remediation.long_description = '[fix](javascript:alert(1))'), 'relationship_findings[0].remediation.long_description', 'unsafe Markdown: contains a javascript: link'],
  ])('%#: %s', (f, context, message) => {
    expectOnly(mutate(f), context, message)
  })

  it('finding names are unique', () => {
    const d = mutate((x) => x.relationship_findings.push(clone(x.relationship_findings[0])))
    expectOnly(d, 'relationship_findings[1].name', 'duplicate relationship finding "EX_Admins": already declared at relationship_findings[0]')
  })
})

describe('several violations at once', () => {
  it('shape and rule violations come together, in document order, each with its path', () => {
    const d = smallDoc('Ext', 'EX') as Record<string, any>
    d.schema.version = '1.0'
    d.node_kinds[0].color = 'blue'
    d.node_kinds[1].name = 'User'
    d.relationship_kinds[0].is_traversable = 'yes'
    d.environments[0].principal_kinds = ['EX_Tenant', 'EX_Missing']
    d.relationship_findings[0].remediation.long_remediation = '<script>x</script>'
    d.relationship_findings[0].relationship_kind = 'EX_Gone'
    expect(errorsOf(d)).toEqual([
      { context: 'schema.version', message: expect.stringContaining('"1.0" is not a semantic version') },
      { context: 'node_kinds[0].color', message: 'must be a hex colour of the form #RGB or #RRGGBB' },
      { context: 'node_kinds[1].name', message: 'node kind "User" must start with the namespace prefix "EX_"' },
      { context: 'relationship_kinds[0].is_traversable', message: 'must be a boolean, not string' },
      { context: 'environments[0].principal_kinds[1]', message: 'principal kind "EX_Missing" is not a node kind declared in this extension' },
      { context: 'relationship_findings[0].relationship_kind', message: 'relationship kind "EX_Gone" is not declared in this extension' },
      { context: 'relationship_findings[0].remediation.long_remediation', message: 'unsafe Markdown: contains a <script> element' },
    ])
  })

  it('a broken item still counts as declared, so references to it do not cascade into more errors', () => {
    const d = mutate((x) => (x.node_kinds[1].color = 'nope'))
    expectOnly(d, 'node_kinds[1].color', '#RGB or #RRGGBB')
  })

  it('the answer is capped', () => {
    const d = smallDoc('Ext', 'EX') as Record<string, any>
    d.environments = []
    d.relationship_findings = []
    d.node_kinds = Array.from({ length: 1000 }, (_, i) => ({ name: `Bad${i}`, color: 'x' }))
    const errs = errorsOf(d)
    expect(errs).toHaveLength(MAX_DETAILS)
    expect(errs[MAX_DETAILS - 1]).toEqual({ context: 'body', message: `${2000 - (MAX_DETAILS - 1)} further violations are not listed` })
  })
})
