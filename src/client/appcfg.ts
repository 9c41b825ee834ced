/**
 * Typed wrappers for the application configuration routes (src/appcfg/appcfg.routes.ts; docs/configuration.md):
 * feature flags and configuration parameters.
 */
import type { EdgeHoundClient } from './index'

export interface FeatureFlagJson {
  id: number
  key: string
  name: string
  description: string
  enabled: boolean
  /** false: fixed in EdgeHound; a toggle is refused */
  user_updatable: boolean
}

export interface ConfigParameterJson {
  key: string
  name: string
  description: string
  value: Record<string, unknown>
}

/** GET /api/v2/features (app/ReadAppConfig) */
export function listFeatureFlags(c: EdgeHoundClient) {
  return c.call<{ data: FeatureFlagJson[] }>('GET', '/api/v2/features')
}

/** PUT /api/v2/features/{id}/toggle (app/WriteAppConfig): flips the flag, answers its new state. */
export function toggleFeatureFlag(c: EdgeHoundClient, id: number) {
  return c.call<{ data: { enabled: boolean } }>('PUT', `/api/v2/features/${id}/toggle`)
}

/** GET /api/v2/config (app/ReadAppConfig) */
export function listConfigParameters(c: EdgeHoundClient) {
  return c.call<{ data: ConfigParameterJson[] }>('GET', '/api/v2/config')
}

/** PUT /api/v2/config (app/WriteAppConfig): `{key, value}`, answered as stored. */
export function setConfigParameter(c: EdgeHoundClient, key: string, value: Record<string, unknown>) {
  return c.call<{ data: { key: string; value: Record<string, unknown> } }>('PUT', '/api/v2/config', { key, value })
}
