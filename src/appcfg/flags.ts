/**
 * Feature flags (BloodHound's `GET /api/v2/features`, `PUT /api/v2/features/{id}/toggle`, its appcfg.FeatureFlag).
 * Only flags that either change EdgeHound's behaviour when toggled, or report honestly a feature EdgeHound
 * always has (those are not user-updatable: a toggle is refused with 403, as BloodHound refuses a flag that is
 * not user-updatable). Ids are fixed here and never renumbered (clients toggle by id). Keys are BloodHound's.
 * The store keeps the state an administrator set (src/appcfg/appcfg.store.ts); the code that reads a flag
 * lives with its feature (post-processing reads `ntlm_post_processing`).
 */
export const NTLM_POST_PROCESSING = 'ntlm_post_processing'

export interface FlagDefinition {
  id: number
  key: string
  name: string
  description: string
  /** the state when no administrator toggled it (always, for a flag that is not user-updatable) */
  enabled: boolean
  user_updatable: boolean
}

export const FLAGS: readonly FlagDefinition[] = Object.freeze([
  {
    id: 1,
    key: NTLM_POST_PROCESSING,
    name: 'NTLM relay post-processing',
    description:
      'Derives the CoerceAndRelayNTLMToSMB, -LDAP, -LDAPS and -ADCS relationships during analysis. Turned off, the next analysis run removes them (and the findings they make).',
    enabled: true,
    user_updatable: true,
  },
  {
    id: 2,
    key: 'adcs',
    name: 'AD CS analysis',
    description: 'Active Directory Certificate Services objects are ingested and their escalation relationships (ADCSESC1 and the others) derived. Always on.',
    enabled: true,
    user_updatable: false,
  },
  {
    id: 3,
    key: 'azure_support',
    name: 'Azure',
    description: 'AzureHound data is ingested and its relationships derived. Always on.',
    enabled: true,
    user_updatable: false,
  },
  {
    id: 4,
    key: 'enable_saml_sso',
    name: 'SAML sign-in',
    description: 'Users may sign in through SAML identity providers. Always on.',
    enabled: true,
    user_updatable: false,
  },
  {
    id: 5,
    key: 'clear_graph_data',
    name: 'Clear collected data',
    description: 'Collected graph data can be deleted through POST /api/v2/clear-database. Always on.',
    enabled: true,
    user_updatable: false,
  },
  {
    id: 6,
    key: 'tier_management_engine',
    name: 'Privilege zones',
    description: 'Tier Zero and labels are managed as asset group tags with selectors and Cypher rules. Always on.',
    enabled: true,
    user_updatable: false,
  },
  {
    id: 7,
    key: 'environment_targeted_access_control',
    name: 'Environment access control',
    description: 'Users may be limited to some environments; reads and writes honour it. Always on.',
    enabled: true,
    user_updatable: false,
  },
  {
    id: 8,
    key: 'opengraph_extension_management',
    name: 'Graph extensions',
    description: 'Graph extensions (PUT /api/v2/extensions) add node and relationship kinds, environments and findings. Always on.',
    enabled: true,
    user_updatable: false,
  },
])

export function flagById(id: number): FlagDefinition | undefined {
  return FLAGS.find((f) => f.id === id)
}

export function flagByKey(key: string): FlagDefinition | undefined {
  return FLAGS.find((f) => f.key === key)
}
