/**
 * SharpHound CE output: `{"meta": {"type", "version", "count", "methods"}, "data": [...]}`, one file per
 * object type. Versions 5 and 6 (and newer) are accepted; a file without `meta.version` is read as
 * version 5 (older SharpHound wrote none in some files). Versions below 5 have another shape
 * (BloodHound ingests nothing from them) and are refused with a message.
 */
import type { CollectorFormat } from '../detect'
import type { ElementConverter } from '../payload'
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

export const MIN_SHARPHOUND_VERSION = 5

export const sharpHound: CollectorFormat = {
  name: 'SharpHound',
  types: Object.keys(SHARPHOUND_CONVERTERS),
  converter(header) {
    const v = header.meta.version
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v)))
      return { context: 'meta.version', message: 'meta.version must be an integer' }
    if (typeof v === 'number' && v < MIN_SHARPHOUND_VERSION)
      return { context: 'meta.version', message: `SharpHound data version ${v} is not supported: version ${MIN_SHARPHOUND_VERSION} or newer is required (SharpHound CE)` }
    return SHARPHOUND_CONVERTERS[header.type]
  },
}
