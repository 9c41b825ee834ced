/**
 * The audit log's action names (docs/audit.md): BloodHound's (cmd/api/src/model/audit.go) plus EdgeHound's own
 * for what BloodHound lacks. A module of its own, without the worker's imports, because the CLI reads it too
 * (`edgehound audit --action` refuses a name not listed here). Never remove a name: the log keeps the rows of
 * an action the service no longer writes, and they must stay searchable.
 */
export const AUDIT_ACTIONS = [
  'LoginAttempt',
  'Logout',
  'CreateUser',
  'UpdateUser',
  'DeleteUser',
  'UpdateUserSecret',
  'ExpireUserSecret',
  'CreateAuthToken',
  'DeleteAuthToken',
  'CreateSAMLIdentityProvider',
  'UpdateSAMLIdentityProvider',
  'DeleteSAMLIdentityProvider',
  'UpdateSSOIdentityProvider',
  'DeleteSSOIdentityProvider',
  'CreateGraphSchemaExtension',
  'DeleteGraphSchemaExtension',
  'AcceptRisk',
  'UnacceptRisk',
  'RequestAnalysis',
  'CreateFileUploadJob',
  'AppendFileUploadJob',
  'EndFileUploadJob',
  'CreateAssetGroup',
  'UpdateAssetGroup',
  'DeleteAssetGroup',
  'CreateAssetGroupSelector',
  'DeleteAssetGroupSelector',
  'CreateAssetGroupTag',
  'UpdateAssetGroupTag',
  'DeleteAssetGroupTag',
  'CreateAssetGroupTagSelector',
  'UpdateAssetGroupTagSelector',
  'DeleteAssetGroupTagSelector',
  'CreateSavedQuery',
  'UpdateSavedQuery',
  'DeleteSavedQuery',
  'UpdateSavedQueryPermissions',
  'DeleteSavedQueryPermissions',
  'ImportSavedQuery',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]
