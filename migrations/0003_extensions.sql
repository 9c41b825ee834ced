-- Graph extensions: node kinds, relationship kinds, environments, relationship findings. See docs/extensions.md.
-- CONTRACT: read through src/extensions (loadKindCatalog); other folders never query these tables.
--
-- One row per installed extension; its child rows are keyed by NAME, and every name is globally unique:
-- a kind (node or relationship, one table so one name cannot be both), an environment kind, a finding.
-- Writes are one db.batch() that reconciles the children by name (src/extensions/extensions.store.ts).

CREATE TABLE extensions (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,  -- public id (GET/DELETE /api/v2/extensions/{id}); never reused
  name                TEXT NOT NULL UNIQUE,               -- schema.name: the upsert key (exact, case-sensitive)
  display_name        TEXT,                               -- schema.display_name as given; NULL = absent
  version             TEXT NOT NULL,                      -- schema.version as given (semantic version)
  namespace           TEXT NOT NULL,                      -- schema.namespace
  is_builtin          INTEGER NOT NULL DEFAULT 0,         -- 1 = installed by a migration; read-only
  generation          TEXT NOT NULL,                      -- random id of the write that last stored this row
  created_generation  TEXT NOT NULL,                      -- generation of the write that created it (created = both equal)
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);

-- Node AND relationship kinds: one table, so that a name is unique across both classes and all extensions.
CREATE TABLE extension_kinds (
  name             TEXT PRIMARY KEY,
  extension_id     INTEGER NOT NULL REFERENCES extensions (id) ON DELETE CASCADE,
  class            TEXT NOT NULL CHECK (class IN ('node', 'relationship')),
  position         INTEGER NOT NULL,                      -- index in the document's node_kinds / relationship_kinds
  display_name     TEXT,                                  -- node kinds; NULL = absent
  description      TEXT,                                  -- NULL = absent
  is_display_kind  INTEGER,                               -- node kinds; NULL = absent (false)
  icon             TEXT,                                  -- node kinds; NULL = absent, '' kept as given
  color            TEXT,                                  -- node kinds; NULL = absent, '' kept as given
  is_traversable   INTEGER                                -- relationship kinds: 0/1 (required)
);
CREATE INDEX extension_kinds_extension ON extension_kinds (extension_id, class, position);

CREATE TABLE extension_environments (
  environment_kind  TEXT PRIMARY KEY REFERENCES extension_kinds (name),  -- a node kind of the same extension
  extension_id      INTEGER NOT NULL REFERENCES extensions (id) ON DELETE CASCADE,
  source_kind       TEXT NOT NULL,
  position          INTEGER NOT NULL
);
CREATE INDEX extension_environments_extension ON extension_environments (extension_id, position);

CREATE TABLE extension_environment_principals (
  environment_kind  TEXT NOT NULL REFERENCES extension_environments (environment_kind) ON DELETE CASCADE,
  principal_kind    TEXT NOT NULL REFERENCES extension_kinds (name),
  position          INTEGER NOT NULL,
  PRIMARY KEY (environment_kind, principal_kind)
);

-- Relationship findings with their four remediation texts (always all four, so columns, not rows).
CREATE TABLE extension_findings (
  name               TEXT PRIMARY KEY,                  -- the finding type (e.g. GH_AdminOfOrg)
  extension_id       INTEGER NOT NULL REFERENCES extensions (id) ON DELETE CASCADE,
  position           INTEGER NOT NULL,
  display_name       TEXT,                              -- NULL = absent
  relationship_kind  TEXT NOT NULL REFERENCES extension_kinds (name),
  -- may name ANOTHER extension's environment: deleting that environment is refused while this row exists
  environment_kind   TEXT NOT NULL REFERENCES extension_environments (environment_kind),
  short_description  TEXT NOT NULL,
  long_description   TEXT NOT NULL,
  short_remediation  TEXT NOT NULL,
  long_remediation   TEXT NOT NULL
);
CREATE INDEX extension_findings_extension ON extension_findings (extension_id, position);
CREATE INDEX extension_findings_environment ON extension_findings (environment_kind);

-- The catalogue version: every extension write sets a new random value in the same batch, and
-- loadKindCatalog's isolate cache is valid exactly while the value is unchanged.
CREATE TABLE extension_catalog_version (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  version     TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

-- Backstops for what the API checks first (a concurrent write could slip between check and batch):
-- a child row never changes owner (an upsert that would take another extension's kind, environment or
-- finding aborts the whole batch), and built-in extensions are never updated or deleted.
CREATE TRIGGER extension_kinds_keep_owner BEFORE UPDATE OF extension_id ON extension_kinds
WHEN NEW.extension_id IS NOT OLD.extension_id
BEGIN
  SELECT RAISE(ABORT, 'edgehound: kind belongs to another extension');
END;

CREATE TRIGGER extension_environments_keep_owner BEFORE UPDATE OF extension_id ON extension_environments
WHEN NEW.extension_id IS NOT OLD.extension_id
BEGIN
  SELECT RAISE(ABORT, 'edgehound: environment belongs to another extension');
END;

CREATE TRIGGER extension_findings_keep_owner BEFORE UPDATE OF extension_id ON extension_findings
WHEN NEW.extension_id IS NOT OLD.extension_id
BEGIN
  SELECT RAISE(ABORT, 'edgehound: finding belongs to another extension');
END;

CREATE TRIGGER extensions_builtin_read_only BEFORE UPDATE ON extensions
WHEN OLD.is_builtin = 1
BEGIN
  SELECT RAISE(ABORT, 'edgehound: built-in extension is read-only');
END;

CREATE TRIGGER extensions_builtin_undeletable BEFORE DELETE ON extensions
WHEN OLD.is_builtin = 1
BEGIN
  SELECT RAISE(ABORT, 'edgehound: built-in extension is read-only');
END;

-- Built-in extensions: Active Directory and Azure, with BloodHound's (unprefixed) kind names.
-- Relationship kinds and is_traversable follow BloodHound's graphschema: ad.Relationships() /
-- azure.Relationships(), traversable = ad.PathfindingRelationships() / azure.PathfindingRelationships()
-- (newest revision), plus the legacy AD kind TrustedBy (not traversable; superseded by SameForestTrust /
-- CrossForestTrust). GetChanges / GetChangesAll are not traversable: only their combination (DCSync,
-- post-processed) gives control. Icons and colours: BloodHound UI defaults (cosmetic).
INSERT INTO extensions (id, name, display_name, version, namespace, is_builtin, generation, created_generation, created_at, updated_at) VALUES
  (1, 'AD', 'Active Directory', 'v1.0.0', 'AD', 1, 'builtin-0003', 'builtin-0003', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
  (2, 'AZ', 'Azure', 'v1.0.0', 'AZ', 1, 'builtin-0003', 'builtin-0003', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');

INSERT INTO extension_kinds (name, extension_id, class, position, display_name, description, is_display_kind, icon, color, is_traversable) VALUES
  ('Base', 1, 'node', 0, 'Base', 'Any Active Directory object (the source kind of Active Directory data)', 0, NULL, NULL, NULL),
  ('User', 1, 'node', 1, 'User', NULL, 1, 'user', '#17E625', NULL),
  ('Computer', 1, 'node', 2, 'Computer', NULL, 1, 'desktop', '#E67873', NULL),
  ('Group', 1, 'node', 3, 'Group', NULL, 1, 'users', '#DBE617', NULL),
  ('Domain', 1, 'node', 4, 'Domain', NULL, 1, 'globe', '#17E6B9', NULL),
  ('GPO', 1, 'node', 5, 'GPO', 'Group Policy Object', 1, 'list', '#998EFD', NULL),
  ('OU', 1, 'node', 6, 'OU', 'Organizational Unit', 1, 'sitemap', '#FFAA00', NULL),
  ('Container', 1, 'node', 7, 'Container', NULL, 1, 'box', '#F79A78', NULL),
  ('CertTemplate', 1, 'node', 8, 'Certificate Template', NULL, 1, 'id-card', '#B153F3', NULL),
  ('EnterpriseCA', 1, 'node', 9, 'Enterprise CA', NULL, 1, 'building', '#4696E9', NULL),
  ('RootCA', 1, 'node', 10, 'Root CA', NULL, 1, 'landmark', '#6968E8', NULL),
  ('AIACA', 1, 'node', 11, 'AIA CA', NULL, 1, 'box-archive', '#9769F0', NULL),
  ('NTAuthStore', 1, 'node', 12, 'NTAuth Store', NULL, 1, 'store', '#D575F5', NULL),
  ('IssuancePolicy', 1, 'node', 13, 'Issuance Policy', NULL, 1, 'clipboard-check', '#99B2DD', NULL),
  ('ADLocalGroup', 1, 'node', 14, 'Local Group', 'A group local to a computer', 1, 'users', '#6ADEC5', NULL),
  ('ADLocalUser', 1, 'node', 15, 'Local User', 'A user local to a computer', 1, 'user', '#7ADEE9', NULL),
  ('Owns', 1, 'relationship', 0, NULL, NULL, NULL, NULL, NULL, 1),
  ('GenericAll', 1, 'relationship', 1, NULL, NULL, NULL, NULL, NULL, 1),
  ('GenericWrite', 1, 'relationship', 2, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteOwner', 1, 'relationship', 3, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteDacl', 1, 'relationship', 4, NULL, NULL, NULL, NULL, NULL, 1),
  ('MemberOf', 1, 'relationship', 5, NULL, NULL, NULL, NULL, NULL, 1),
  ('ForceChangePassword', 1, 'relationship', 6, NULL, NULL, NULL, NULL, NULL, 1),
  ('AllExtendedRights', 1, 'relationship', 7, NULL, NULL, NULL, NULL, NULL, 1),
  ('AddMember', 1, 'relationship', 8, NULL, NULL, NULL, NULL, NULL, 1),
  ('HasSession', 1, 'relationship', 9, NULL, NULL, NULL, NULL, NULL, 1),
  ('Contains', 1, 'relationship', 10, NULL, NULL, NULL, NULL, NULL, 1),
  ('GPLink', 1, 'relationship', 11, NULL, NULL, NULL, NULL, NULL, 1),
  ('AllowedToDelegate', 1, 'relationship', 12, NULL, NULL, NULL, NULL, NULL, 1),
  ('CoerceToTGT', 1, 'relationship', 13, NULL, NULL, NULL, NULL, NULL, 1),
  ('GetChanges', 1, 'relationship', 14, NULL, NULL, NULL, NULL, NULL, 0),
  ('GetChangesAll', 1, 'relationship', 15, NULL, NULL, NULL, NULL, NULL, 0),
  ('GetChangesInFilteredSet', 1, 'relationship', 16, NULL, NULL, NULL, NULL, NULL, 0),
  ('CrossForestTrust', 1, 'relationship', 17, NULL, NULL, NULL, NULL, NULL, 0),
  ('SameForestTrust', 1, 'relationship', 18, NULL, NULL, NULL, NULL, NULL, 1),
  ('SpoofSIDHistory', 1, 'relationship', 19, NULL, NULL, NULL, NULL, NULL, 1),
  ('AbuseTGTDelegation', 1, 'relationship', 20, NULL, NULL, NULL, NULL, NULL, 1),
  ('AllowedToAct', 1, 'relationship', 21, NULL, NULL, NULL, NULL, NULL, 1),
  ('AdminTo', 1, 'relationship', 22, NULL, NULL, NULL, NULL, NULL, 1),
  ('CanPSRemote', 1, 'relationship', 23, NULL, NULL, NULL, NULL, NULL, 1),
  ('CanRDP', 1, 'relationship', 24, NULL, NULL, NULL, NULL, NULL, 1),
  ('ExecuteDCOM', 1, 'relationship', 25, NULL, NULL, NULL, NULL, NULL, 1),
  ('HasSIDHistory', 1, 'relationship', 26, NULL, NULL, NULL, NULL, NULL, 1),
  ('AddSelf', 1, 'relationship', 27, NULL, NULL, NULL, NULL, NULL, 1),
  ('DCSync', 1, 'relationship', 28, NULL, NULL, NULL, NULL, NULL, 1),
  ('ReadLAPSPassword', 1, 'relationship', 29, NULL, NULL, NULL, NULL, NULL, 1),
  ('ReadGMSAPassword', 1, 'relationship', 30, NULL, NULL, NULL, NULL, NULL, 1),
  ('DumpSMSAPassword', 1, 'relationship', 31, NULL, NULL, NULL, NULL, NULL, 1),
  ('SQLAdmin', 1, 'relationship', 32, NULL, NULL, NULL, NULL, NULL, 1),
  ('AddAllowedToAct', 1, 'relationship', 33, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteSPN', 1, 'relationship', 34, NULL, NULL, NULL, NULL, NULL, 1),
  ('AddKeyCredentialLink', 1, 'relationship', 35, NULL, NULL, NULL, NULL, NULL, 1),
  ('LocalToComputer', 1, 'relationship', 36, NULL, NULL, NULL, NULL, NULL, 0),
  ('MemberOfLocalGroup', 1, 'relationship', 37, NULL, NULL, NULL, NULL, NULL, 0),
  ('RemoteInteractiveLogonRight', 1, 'relationship', 38, NULL, NULL, NULL, NULL, NULL, 0),
  ('SyncLAPSPassword', 1, 'relationship', 39, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteAccountRestrictions', 1, 'relationship', 40, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteGPLink', 1, 'relationship', 41, NULL, NULL, NULL, NULL, NULL, 1),
  ('RootCAFor', 1, 'relationship', 42, NULL, NULL, NULL, NULL, NULL, 0),
  ('DCFor', 1, 'relationship', 43, NULL, NULL, NULL, NULL, NULL, 1),
  ('PublishedTo', 1, 'relationship', 44, NULL, NULL, NULL, NULL, NULL, 0),
  ('ManageCertificates', 1, 'relationship', 45, NULL, NULL, NULL, NULL, NULL, 1),
  ('ManageCA', 1, 'relationship', 46, NULL, NULL, NULL, NULL, NULL, 1),
  ('DelegatedEnrollmentAgent', 1, 'relationship', 47, NULL, NULL, NULL, NULL, NULL, 0),
  ('Enroll', 1, 'relationship', 48, NULL, NULL, NULL, NULL, NULL, 0),
  ('HostsCAService', 1, 'relationship', 49, NULL, NULL, NULL, NULL, NULL, 0),
  ('WritePKIEnrollmentFlag', 1, 'relationship', 50, NULL, NULL, NULL, NULL, NULL, 0),
  ('WritePKINameFlag', 1, 'relationship', 51, NULL, NULL, NULL, NULL, NULL, 0),
  ('NTAuthStoreFor', 1, 'relationship', 52, NULL, NULL, NULL, NULL, NULL, 0),
  ('TrustedForNTAuth', 1, 'relationship', 53, NULL, NULL, NULL, NULL, NULL, 0),
  ('EnterpriseCAFor', 1, 'relationship', 54, NULL, NULL, NULL, NULL, NULL, 0),
  ('IssuedSignedBy', 1, 'relationship', 55, NULL, NULL, NULL, NULL, NULL, 0),
  ('GoldenCert', 1, 'relationship', 56, NULL, NULL, NULL, NULL, NULL, 1),
  ('EnrollOnBehalfOf', 1, 'relationship', 57, NULL, NULL, NULL, NULL, NULL, 0),
  ('OIDGroupLink', 1, 'relationship', 58, NULL, NULL, NULL, NULL, NULL, 0),
  ('ExtendedByPolicy', 1, 'relationship', 59, NULL, NULL, NULL, NULL, NULL, 0),
  ('ADCSESC1', 1, 'relationship', 60, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC3', 1, 'relationship', 61, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC4', 1, 'relationship', 62, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC6a', 1, 'relationship', 63, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC6b', 1, 'relationship', 64, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC9a', 1, 'relationship', 65, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC9b', 1, 'relationship', 66, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC10a', 1, 'relationship', 67, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC10b', 1, 'relationship', 68, NULL, NULL, NULL, NULL, NULL, 1),
  ('ADCSESC13', 1, 'relationship', 69, NULL, NULL, NULL, NULL, NULL, 1),
  ('SyncedToEntraUser', 1, 'relationship', 70, NULL, NULL, NULL, NULL, NULL, 1),
  ('CoerceAndRelayNTLMToSMB', 1, 'relationship', 71, NULL, NULL, NULL, NULL, NULL, 1),
  ('CoerceAndRelayNTLMToADCS', 1, 'relationship', 72, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteOwnerLimitedRights', 1, 'relationship', 73, NULL, NULL, NULL, NULL, NULL, 1),
  ('WriteOwnerRaw', 1, 'relationship', 74, NULL, NULL, NULL, NULL, NULL, 0),
  ('OwnsLimitedRights', 1, 'relationship', 75, NULL, NULL, NULL, NULL, NULL, 1),
  ('OwnsRaw', 1, 'relationship', 76, NULL, NULL, NULL, NULL, NULL, 0),
  ('ClaimSpecialIdentity', 1, 'relationship', 77, NULL, NULL, NULL, NULL, NULL, 1),
  ('CoerceAndRelayNTLMToLDAP', 1, 'relationship', 78, NULL, NULL, NULL, NULL, NULL, 1),
  ('CoerceAndRelayNTLMToLDAPS', 1, 'relationship', 79, NULL, NULL, NULL, NULL, NULL, 1),
  ('ContainsIdentity', 1, 'relationship', 80, NULL, NULL, NULL, NULL, NULL, 1),
  ('PropagatesACEsTo', 1, 'relationship', 81, NULL, NULL, NULL, NULL, NULL, 1),
  ('GPOAppliesTo', 1, 'relationship', 82, NULL, NULL, NULL, NULL, NULL, 1),
  ('CanApplyGPO', 1, 'relationship', 83, NULL, NULL, NULL, NULL, NULL, 1),
  ('HasTrustKeys', 1, 'relationship', 84, NULL, NULL, NULL, NULL, NULL, 1),
  ('ProtectAdminGroups', 1, 'relationship', 85, NULL, NULL, NULL, NULL, NULL, 0),
  ('CanBackup', 1, 'relationship', 86, NULL, NULL, NULL, NULL, NULL, 1),
  ('BackupPrivilege', 1, 'relationship', 87, NULL, NULL, NULL, NULL, NULL, 0),
  ('RestorePrivilege', 1, 'relationship', 88, NULL, NULL, NULL, NULL, NULL, 0),
  ('TrustedBy', 1, 'relationship', 89, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZBase', 2, 'node', 0, 'Azure Base', 'Any Azure / Entra ID object (the source kind of Azure data)', 0, NULL, NULL, NULL),
  ('AZTenant', 2, 'node', 1, 'Tenant', NULL, 1, 'cloud', '#54F2F2', NULL),
  ('AZUser', 2, 'node', 2, 'Azure User', NULL, 1, 'user', '#34D2EB', NULL),
  ('AZGroup', 2, 'node', 3, 'Azure Group', NULL, 1, 'users', '#F57C9B', NULL),
  ('AZServicePrincipal', 2, 'node', 4, 'Service Principal', NULL, 1, 'robot', '#C1D6D6', NULL),
  ('AZApp', 2, 'node', 5, 'App Registration', NULL, 1, 'window-restore', '#03FC84', NULL),
  ('AZDevice', 2, 'node', 6, 'Device', NULL, 1, 'desktop', '#B18FCF', NULL),
  ('AZRole', 2, 'node', 7, 'Role', NULL, 1, 'clipboard-list', '#ED8537', NULL),
  ('AZSubscription', 2, 'node', 8, 'Subscription', NULL, 1, 'key', '#D2CCA1', NULL),
  ('AZResourceGroup', 2, 'node', 9, 'Resource Group', NULL, 1, 'cube', '#89BD9E', NULL),
  ('AZVM', 2, 'node', 10, 'Virtual Machine', NULL, 1, 'desktop', '#F9ADA0', NULL),
  ('AZKeyVault', 2, 'node', 11, 'Key Vault', NULL, 1, 'lock', '#ED658C', NULL),
  ('AZManagementGroup', 2, 'node', 12, 'Management Group', NULL, 1, 'sitemap', '#BD93D8', NULL),
  ('AZAutomationAccount', 2, 'node', 13, 'Automation Account', NULL, 1, 'cogs', '#F4BA44', NULL),
  ('AZContainerRegistry', 2, 'node', 14, 'Container Registry', NULL, 1, 'box-open', '#0885D7', NULL),
  ('AZFunctionApp', 2, 'node', 15, 'Function App', NULL, 1, 'bolt-lightning', '#F4BA44', NULL),
  ('AZLogicApp', 2, 'node', 16, 'Logic App', NULL, 1, 'sitemap', '#9EE047', NULL),
  ('AZManagedCluster', 2, 'node', 17, 'Managed Cluster', NULL, 1, 'cubes', '#326CE5', NULL),
  ('AZVMScaleSet', 2, 'node', 18, 'VM Scale Set', NULL, 1, 'server', '#007CD0', NULL),
  ('AZWebApp', 2, 'node', 19, 'Web App', NULL, 1, 'object-group', '#4696E9', NULL),
  ('AZAvereContributor', 2, 'relationship', 0, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZContains', 2, 'relationship', 1, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZContributor', 2, 'relationship', 2, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZGetCertificates', 2, 'relationship', 3, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZGetKeys', 2, 'relationship', 4, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZGetSecrets', 2, 'relationship', 5, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZHasRole', 2, 'relationship', 6, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMemberOf', 2, 'relationship', 7, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZOwner', 2, 'relationship', 8, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZRunsAs', 2, 'relationship', 9, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZVMContributor', 2, 'relationship', 10, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZAutomationContributor', 2, 'relationship', 11, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZKeyVaultContributor', 2, 'relationship', 12, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZVMAdminLogin', 2, 'relationship', 13, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZAddMembers', 2, 'relationship', 14, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZAddSecret', 2, 'relationship', 15, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZExecuteCommand', 2, 'relationship', 16, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZGlobalAdmin', 2, 'relationship', 17, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZPrivilegedAuthAdmin', 2, 'relationship', 18, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZGrant', 2, 'relationship', 19, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZGrantSelf', 2, 'relationship', 20, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZPrivilegedRoleAdmin', 2, 'relationship', 21, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZResetPassword', 2, 'relationship', 22, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZUserAccessAdministrator', 2, 'relationship', 23, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZOwns', 2, 'relationship', 24, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZScopedTo', 2, 'relationship', 25, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZCloudAppAdmin', 2, 'relationship', 26, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZAppAdmin', 2, 'relationship', 27, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZAddOwner', 2, 'relationship', 28, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZManagedIdentity', 2, 'relationship', 29, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMGApplication_ReadWrite_All', 2, 'relationship', 30, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZMGAppRoleAssignment_ReadWrite_All', 2, 'relationship', 31, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZMGDirectory_ReadWrite_All', 2, 'relationship', 32, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZMGGroup_ReadWrite_All', 2, 'relationship', 33, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZMGGroupMember_ReadWrite_All', 2, 'relationship', 34, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZMGRoleManagement_ReadWrite_Directory', 2, 'relationship', 35, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZMGServicePrincipalEndpoint_ReadWrite_All', 2, 'relationship', 36, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZAKSContributor', 2, 'relationship', 37, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZNodeResourceGroup', 2, 'relationship', 38, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZWebsiteContributor', 2, 'relationship', 39, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZLogicAppContributor', 2, 'relationship', 40, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMGAddMember', 2, 'relationship', 41, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMGAddOwner', 2, 'relationship', 42, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMGAddSecret', 2, 'relationship', 43, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMGGrantAppRoles', 2, 'relationship', 44, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZMGGrantRole', 2, 'relationship', 45, NULL, NULL, NULL, NULL, NULL, 1),
  ('SyncedToADUser', 2, 'relationship', 46, NULL, NULL, NULL, NULL, NULL, 1),
  ('AZRoleEligible', 2, 'relationship', 47, NULL, NULL, NULL, NULL, NULL, 0),
  ('AZRoleApprover', 2, 'relationship', 48, NULL, NULL, NULL, NULL, NULL, 0);

INSERT INTO extension_environments (environment_kind, extension_id, source_kind, position) VALUES
  ('Domain', 1, 'Base', 0),
  ('AZTenant', 2, 'AZBase', 0);

INSERT INTO extension_environment_principals (environment_kind, principal_kind, position) VALUES
  ('Domain', 'User', 0),
  ('Domain', 'Computer', 1),
  ('Domain', 'Group', 2),
  ('AZTenant', 'AZUser', 0),
  ('AZTenant', 'AZGroup', 1),
  ('AZTenant', 'AZServicePrincipal', 2),
  ('AZTenant', 'AZDevice', 3);

-- A migration that changes built-in rows must drop the read-only triggers first and set a new version here.
INSERT INTO extension_catalog_version (id, version, updated_at) VALUES (1, 'builtin-0003', '2026-01-01T00:00:00.000Z');
