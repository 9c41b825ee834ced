/**
 * SharpHound CE output: `{"meta": {"type", "version", "count", "methods"}, "data": [...]}`, one file per
 * object type. Versions 5 and 6 (and newer) are accepted; a file without `meta.version` is read as
 * version 5 (older SharpHound wrote none in some files). Versions below 5 have another shape
 * (BloodHound skips their `computers` files and converts the others with member names that shape lacks,
 * so most relationships would be lost without a word) and are refused with a message instead.
 */
import type { CollectorFormat } from '../detect'
import type { ElementConverter, NodeRow } from '../payload'
import { convertAiaCa, convertCertTemplate, convertEnterpriseCa, convertIssuancePolicy, convertNtAuthStore, convertRootCa } from './adcs'
import { convertComputer } from './computers'
import { convertContainer } from './containers'
import { convertDomain } from './domains'
import { convertGpo } from './gpos'
import { convertGroup } from './groups'
import { convertOu } from './ous'
import { convertSession } from './sessions'
import { convertUser } from './users'

export const SHARPHOUND_CONVERTERS: Readonly<Record<string, ElementConverter>> = {
  users: convertUser,
  groups: convertGroup,
  computers: convertComputer,
  domains: convertDomain,
  gpos: convertGpo,
  ous: convertOu,
  containers: convertContainer,
  certtemplates: convertCertTemplate,
  enterprisecas: convertEnterpriseCa,
  rootcas: convertRootCa,
  aiacas: convertAiaCa,
  ntauthstores: convertNtAuthStore,
  issuancepolicies: convertIssuancePolicy,
  sessions: convertSession,
}

/**
 * Node properties BloodHound upper-cases on ingest of every collector node (its NormalizeEinNodeProperties):
 * `name`, `operatingsystem` and `distinguishedname`. The names SharpHound writes are mostly upper-case
 * already, but not always (a trust's TargetDomainName, an OS as Windows reports it, a DN as LDAP spells it).
 */
export const UPPER_CASED_PROPERTIES = ['name', 'operatingsystem', 'distinguishedname'] as const

/**
 * Upper-cases those properties in place. In place matters: a converter may still add to the row's
 * properties after emitting it (computers.ts sets `hasura` from the user rights afterwards).
 */
export function upperCaseNodeProperties(row: NodeRow): NodeRow {
  for (const k of UPPER_CASED_PROPERTIES) {
    const v = row.p[k]
    if (typeof v === 'string') row.p[k] = v.toUpperCase()
  }
  return row
}

/**
 * A converter with BloodHound's ingest normalisation: node properties as above, and object ids upper-cased
 * on nodes and on both ends of every relationship (BloodHound upper-cases the `objectid` of every collector
 * node and the ends it matches relationships by), so that an id a collector spelled in lower case somewhere
 * (a GUID, a `DN=` member) is the same node everywhere. SharpHound writes SIDs and GUIDs upper-case already.
 */
function normalised(convert: ElementConverter): ElementConverter {
  return (item, path, out) =>
    convert(item, path, {
      node: (row, opts) => {
        row.o = row.o.toUpperCase()
        out.node(upperCaseNodeProperties(row), opts)
      },
      edge: (s, sk, t, tk, k, p) => out.edge(s.toUpperCase(), sk, t.toUpperCase(), tk, k, p),
      violation: (c, m) => out.violation(c, m),
    })
}

const NORMALISED: Readonly<Record<string, ElementConverter>> = Object.fromEntries(
  Object.entries(SHARPHOUND_CONVERTERS).map(([type, convert]) => [type, normalised(convert)]),
)

export const MIN_SHARPHOUND_VERSION = 5

/**
 * `meta.type` values BloodHound accepts on upload but converts nothing from (they are valid types of its
 * ingest model, and its IngestWrapper has no case for them): `deleted` (SharpHound's list of the ids of
 * deleted objects) and `localgroups`. Their files are accepted and write nothing, as in BloodHound, instead
 * of failing the whole upload: BloodHound's own ingest test sends a `deleted` file with each SharpHound set.
 *
 * The AD site types `sites`, `siteservers` and `sitesubnets` are valid original types of BloodHound's newest
 * ingest model (packages/go/chow/ingest/ingest.go, AllOriginalIngestDataTypes; its payload validator test
 * accepts an empty file of each). Their conversion was not in the BloodHound source available to this
 * project (no handler for them in the graphify IngestWrapper versions read), so they are accepted and
 * converted to nothing rather than guessed at; refusing them failed every zip with a site member.
 * docs/collectors.md lists this under what is not done.
 */
export const SHARPHOUND_SITE_TYPES: readonly string[] = ['sites', 'siteservers', 'sitesubnets']

export const SHARPHOUND_IGNORED_TYPES: readonly string[] = ['deleted', 'localgroups', ...SHARPHOUND_SITE_TYPES]

/** The converter of an ignored type: every element is read (so the file must still be well-formed) and dropped. */
const ignoreElement: ElementConverter = () => {}

export const sharpHound: CollectorFormat = {
  name: 'SharpHound',
  types: [...Object.keys(SHARPHOUND_CONVERTERS), ...SHARPHOUND_IGNORED_TYPES],
  converter(header) {
    const v = header.meta.version
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v)))
      return { context: 'meta.version', message: 'meta.version must be an integer' }
    if (typeof v === 'number' && v < MIN_SHARPHOUND_VERSION)
      return { context: 'meta.version', message: `SharpHound data version ${v} is not supported: version ${MIN_SHARPHOUND_VERSION} or newer is required (SharpHound CE)` }
    return NORMALISED[header.type] ?? ignoreElement
  },
}
