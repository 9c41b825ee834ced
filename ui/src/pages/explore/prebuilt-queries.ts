/**
 * The console's pre-built Cypher queries, grouped by category: EdgeHound's own list of the questions BloodHound
 * users ask every day (who is a Domain Admin, what can be Kerberoasted, where does delegation leak, which paths
 * lead to Tier Zero, who holds Global Administrator in Entra ID, …). Each is written for EdgeHound's Cypher
 * engine and bounded with a LIMIT; test/integration/console-prebuilt-queries.test.ts runs every one of them
 * through POST /api/v2/graphs/cypher against a small graph and expects no error. Pure data.
 */

export interface PrebuiltQuery {
  name: string
  /** one line saying what the answer shows */
  description: string
  query: string
}

export interface PrebuiltCategory {
  category: string
  platform: 'Active Directory' | 'Azure' | 'Any'
  queries: PrebuiltQuery[]
}

const q = (name: string, description: string, query: string): PrebuiltQuery => ({ name, description, query })

export const PREBUILT_QUERIES: PrebuiltCategory[] = [
  {
    category: 'Domain information',
    platform: 'Active Directory',
    queries: [
      q('All domains', 'Every Active Directory domain collected', 'MATCH (d:Domain) RETURN d LIMIT 1000'),
      q('Domain controllers', 'Computers in a Domain Controllers group', "MATCH p = (c:Computer)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-516' RETURN p LIMIT 1000"),
      q('Domain trusts', 'Trust relationships between domains', 'MATCH p = (:Domain)-[:SameForestTrust|CrossForestTrust|TrustedBy]->(:Domain) RETURN p LIMIT 1000'),
      q('Members of Domain Admins', 'Principals in a Domain Admins group, through nested groups', "MATCH p = (n:Base)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN p LIMIT 1000"),
      q('Members of Enterprise Admins', 'Principals in an Enterprise Admins group', "MATCH p = (n:Base)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-519' RETURN p LIMIT 1000"),
      q('Tier Zero objects', 'Every object counted as Tier Zero', 'MATCH (n:Tag_Tier_Zero) RETURN n LIMIT 1000'),
      q('Owned objects', 'Every object marked Owned', 'MATCH (n:Tag_Owned) RETURN n LIMIT 1000'),
      q('Operating systems out of support', 'Enabled computers running a Windows release past its support', "MATCH (c:Computer) WHERE c.operatingsystem =~ '(?i).*(2000|2003|2008|xp|vista|windows 7|windows 8).*' RETURN c LIMIT 100"),
    ],
  },
  {
    category: 'Dangerous privileges',
    platform: 'Active Directory',
    queries: [
      q('DCSync rights', 'Principals that can replicate secrets from a domain (DCSync, or both GetChanges rights)', 'MATCH p = (n:Base)-[:DCSync|GetChangesAll|AllExtendedRights|GenericAll]->(:Domain) RETURN p LIMIT 1000'),
      q('Foreign group memberships', 'Principals of one domain in groups of another', 'MATCH p = (n:Base)-[:MemberOf]->(g:Group) WHERE n.domainsid <> g.domainsid RETURN p LIMIT 1000'),
      q('Local admins through Domain Users', 'Computers where every domain user is a local administrator', "MATCH p = (g:Group)-[:AdminTo]->(:Computer) WHERE g.objectid ENDS WITH '-513' RETURN p LIMIT 1000"),
      q('Remote Desktop for Domain Users', 'Computers every domain user may log on to with RDP', "MATCH p = (g:Group)-[:CanRDP]->(:Computer) WHERE g.objectid ENDS WITH '-513' RETURN p LIMIT 1000"),
      q('Control over GPOs', 'Who can change a Group Policy Object', 'MATCH p = (n:Base)-[:GenericAll|GenericWrite|Owns|WriteOwner|WriteDacl]->(:GPO) RETURN p LIMIT 1000'),
      q('Principals that can read LAPS passwords', 'ReadLAPSPassword and SyncLAPSPassword holders', 'MATCH p = (n:Base)-[:ReadLAPSPassword|SyncLAPSPassword]->(:Computer) RETURN p LIMIT 1000'),
      q('Principals that can read gMSA passwords', 'ReadGMSAPassword holders', 'MATCH p = (n:Base)-[:ReadGMSAPassword]->(:User) RETURN p LIMIT 1000'),
      q('Sessions of Domain Admins', 'Computers where a Domain Admin has a session', "MATCH p = (:Computer)-[:HasSession]->(u:User)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN p LIMIT 1000"),
    ],
  },
  {
    category: 'Kerberos interaction',
    platform: 'Active Directory',
    queries: [
      q('Kerberoastable users', 'Enabled users with a service principal name', 'MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN u LIMIT 100'),
      q('Kerberoastable members of Tier Zero', 'Tier Zero users with a service principal name', 'MATCH (u:User:Tag_Tier_Zero) WHERE u.hasspn = true RETURN u LIMIT 100'),
      q('AS-REP roastable users', 'Users that do not require Kerberos pre-authentication', 'MATCH (u:User) WHERE u.dontreqpreauth = true RETURN u LIMIT 100'),
      q('Unconstrained delegation', 'Computers and users trusted for unconstrained delegation, domain controllers aside', "MATCH (n:Base) WHERE n.unconstraineddelegation = true AND NOT n:Tag_Tier_Zero RETURN n LIMIT 100"),
      q('Constrained delegation', 'Who may delegate to which computer', 'MATCH p = (n:Base)-[:AllowedToDelegate]->(:Computer) RETURN p LIMIT 1000'),
      q('Resource-based constrained delegation', 'Who may act on behalf of other identities to a computer', 'MATCH p = (n:Base)-[:AllowedToAct]->(:Computer) RETURN p LIMIT 1000'),
    ],
  },
  {
    category: 'Shortest paths',
    platform: 'Active Directory',
    queries: [
      q('Shortest paths to Domain Admins', 'From any principal to a Domain Admins group', "MATCH p = shortestPath((n:Base)-[*1..]->(g:Group)) WHERE g.objectid ENDS WITH '-512' AND n <> g RETURN p LIMIT 1000"),
      q('Shortest paths to Tier Zero', 'From any principal outside Tier Zero to a Tier Zero object', 'MATCH p = shortestPath((n:Base)-[*1..]->(t:Tag_Tier_Zero)) WHERE NOT n:Tag_Tier_Zero RETURN p LIMIT 1000'),
      q('Shortest paths from Owned objects', 'From objects marked Owned to anything they reach', 'MATCH p = shortestPath((o:Tag_Owned)-[*1..]->(t:Tag_Tier_Zero)) WHERE o <> t RETURN p LIMIT 1000'),
      q('Shortest paths from Domain Users', 'What every domain user can reach in Tier Zero', "MATCH p = shortestPath((g:Group)-[*1..]->(t:Tag_Tier_Zero)) WHERE g.objectid ENDS WITH '-513' AND g <> t RETURN p LIMIT 1000"),
      q('Shortest paths from Kerberoastable users', 'From roastable accounts to Tier Zero', 'MATCH p = shortestPath((u:User)-[*1..]->(t:Tag_Tier_Zero)) WHERE u.hasspn = true AND u <> t RETURN p LIMIT 1000'),
      q('Paths to unconstrained delegation systems', 'From any principal to a computer with unconstrained delegation', 'MATCH p = shortestPath((n:Base)-[*1..]->(c:Computer)) WHERE c.unconstraineddelegation = true AND n <> c RETURN p LIMIT 1000'),
    ],
  },
  {
    category: 'Certificate services (AD CS)',
    platform: 'Active Directory',
    queries: [
      q('Enterprise certificate authorities', 'Every enterprise CA', 'MATCH (c:EnterpriseCA) RETURN c LIMIT 1000'),
      q('Certificate templates published to CAs', 'Templates and the CAs that publish them', 'MATCH p = (:CertTemplate)-[:PublishedTo]->(:EnterpriseCA) RETURN p LIMIT 1000'),
      q('ESC1 escalations', 'Principals that can enrol a certificate with a subject of their choosing', 'MATCH p = (n:Base)-[:ADCSESC1]->(:Domain) RETURN p LIMIT 1000'),
      q('Enrolment rights on templates', 'Who may enrol on which certificate template', 'MATCH p = (n:Base)-[:Enroll|GenericAll|AllExtendedRights]->(:CertTemplate) RETURN p LIMIT 1000'),
    ],
  },
  {
    category: 'Hygiene',
    platform: 'Active Directory',
    queries: [
      q('Enabled users with an old password', 'Passwords last set more than a year ago', 'MATCH (u:User) WHERE u.enabled = true AND u.pwdlastset > 0 AND u.pwdlastset < (datetime().epochseconds - 365 * 86400) RETURN u LIMIT 100'),
      q('Users whose password never expires', 'Enabled users with a non-expiring password', 'MATCH (u:User) WHERE u.enabled = true AND u.pwdneverexpires = true RETURN u LIMIT 100'),
      q('Disabled Tier Zero principals', 'Disabled users and computers still in Tier Zero', 'MATCH (n:Tag_Tier_Zero) WHERE n.enabled = false RETURN n LIMIT 100'),
      q('Computers without LAPS', 'Enabled computers whose local administrator password is not managed', 'MATCH (c:Computer) WHERE c.haslaps = false RETURN c LIMIT 100'),
    ],
  },
  {
    category: 'Azure: general',
    platform: 'Azure',
    queries: [
      q('All tenants', 'Every Entra ID tenant collected', 'MATCH (t:AZTenant) RETURN t LIMIT 1000'),
      q('Global Administrators', 'Principals holding the Global Administrator role, directly or through a group', "MATCH p = (n:AZBase)-[:AZMemberOf|AZHasRole*1..]->(r:AZRole) WHERE r.name =~ '(?i)global administrator.*' RETURN p LIMIT 1000"),
      q('Privileged Role Administrators', 'Principals holding the Privileged Role Administrator role', "MATCH p = (n:AZBase)-[:AZMemberOf|AZHasRole*1..]->(r:AZRole) WHERE r.name =~ '(?i)privileged role administrator.*' RETURN p LIMIT 1000"),
      q('All Entra ID role assignments', 'Every direct role assignment', 'MATCH p = (:AZBase)-[:AZHasRole]->(:AZRole) RETURN p LIMIT 1000'),
      q('Owners of applications', 'Who owns which application registration', 'MATCH p = (:AZBase)-[:AZOwns]->(:AZApp) RETURN p LIMIT 1000'),
    ],
  },
  {
    category: 'Azure: shortest paths',
    platform: 'Azure',
    queries: [
      q('Shortest paths to Global Administrator', 'From any Entra ID principal to the Global Administrator role', "MATCH p = shortestPath((n:AZBase)-[*1..]->(r:AZRole)) WHERE r.name =~ '(?i)global administrator.*' AND n <> r RETURN p LIMIT 1000"),
      q('Shortest paths to Azure Tier Zero', 'From Entra ID principals outside Tier Zero to Tier Zero', 'MATCH p = shortestPath((n:AZBase)-[*1..]->(t:Tag_Tier_Zero)) WHERE NOT n:Tag_Tier_Zero RETURN p LIMIT 1000'),
      q('On-premises users synchronised to Entra ID', 'Active Directory users linked to their Entra ID account', 'MATCH p = (:User)-[:SyncedToEntraUser]->(:AZUser) RETURN p LIMIT 1000'),
    ],
  },
]

/** Every pre-built query with its category (for the list and the tests). */
export function allPrebuilt(): (PrebuiltQuery & { category: string; platform: PrebuiltCategory['platform'] })[] {
  return PREBUILT_QUERIES.flatMap((c) => c.queries.map((x) => ({ ...x, category: c.category, platform: c.platform })))
}

/** The categories whose queries' names or descriptions contain `text` (case-insensitive); all when empty. */
export function filterPrebuilt(text: string, list: PrebuiltCategory[] = PREBUILT_QUERIES): PrebuiltCategory[] {
  const t = text.trim().toLowerCase()
  if (!t) return list
  return list
    .map((c) => ({ ...c, queries: c.queries.filter((x) => x.name.toLowerCase().includes(t) || x.description.toLowerCase().includes(t) || c.category.toLowerCase().includes(t)) }))
    .filter((c) => c.queries.length > 0)
}
