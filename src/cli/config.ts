/// <reference types="node" />
/**
 * Where the CLI's settings come from: flags, then environment variables, then a profile file.
 *
 * Security reasoning, kept next to the code:
 * - A token key or password is never accepted as a command-line argument: arguments end up in shell
 *   history and are visible to every local user through the process list (`ps`, /proc/<pid>/cmdline).
 *   Keys come from EDGEHOUND_TOKEN_KEY, from a file (`--token-key-file PATH`, `-` for standard input)
 *   or from the profile file; passwords from a no-echo prompt, standard input or EDGEHOUND_PASSWORD.
 * - The profile file is written with mode 0600 inside a 0700 directory, through a temporary file and a
 *   rename, so a crash never leaves a half-written file and no other user can read the key at any moment.
 *   Reading a file that others can read prints a warning (like ssh does for private keys).
 * - A key from one source is only ever paired with the token id of the same source (a profile's key is
 *   not sent with a token id given on the command line), so a key is never used to sign for another token.
 */
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Credentials } from '../client'
import { CliError, UsageError } from './errors'

export interface Profile {
  url?: string
  token_id?: string
  token_key?: string
  session_token?: string
  username?: string
}

export interface ConfigFile {
  default_profile?: string
  profiles: Record<string, Profile>
}

export interface GlobalFlags {
  url?: string
  profile?: string
  config?: string
  'token-id'?: string
  'token-key-file'?: string
}

export interface Settings {
  url: string | undefined
  credentials: Credentials
  profileName: string
  configPath: string
  /** where the credentials came from, for messages */
  credentialSource: string
}

export function configPath(flags: GlobalFlags, env: Record<string, string | undefined>, homedir: string): string {
  if (flags.config) return flags.config
  if (env.EDGEHOUND_CONFIG) return env.EDGEHOUND_CONFIG
  const base = env.XDG_CONFIG_HOME || path.join(homedir, '.config')
  return path.join(base, 'edgehound', 'config.json')
}

export async function readConfigFile(file: string, warn: (msg: string) => void): Promise<ConfigFile> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} }
    throw new CliError(`cannot read the profile file ${file}: ${(e as Error).message}`)
  }
  try {
    const st = await stat(file)
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0)
      warn(`warning: ${file} is accessible by other users; run: chmod 600 ${file}`)
  } catch {
    /* stat after a successful read failing is not worth an error */
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    throw new CliError(`the profile file ${file} is not valid JSON: ${(e as Error).message}`)
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`the profile file ${file} must hold a JSON object`)
  const obj = parsed as Partial<ConfigFile>
  const profiles = obj.profiles && typeof obj.profiles === 'object' ? obj.profiles : {}
  return { default_profile: typeof obj.default_profile === 'string' ? obj.default_profile : undefined, profiles }
}

/** Merges `patch` into one profile (undefined members are removed) and writes the file privately. */
export async function updateProfile(file: string, name: string, patch: Partial<Record<keyof Profile, string | undefined>>): Promise<void> {
  const current = await readConfigFile(file, () => {})
  const profile: Profile = { ...(current.profiles[name] ?? {}) }
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete profile[k as keyof Profile]
    else profile[k as keyof Profile] = v
  }
  current.profiles[name] = profile
  const dir = path.dirname(file)
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`)
  await writeFile(tmp, JSON.stringify(current, null, 2) + '\n', { mode: 0o600 })
  await chmod(tmp, 0o600)
  await rename(tmp, file)
}

export function profileName(flags: GlobalFlags, env: Record<string, string | undefined>, file: ConfigFile): string {
  return flags.profile || env.EDGEHOUND_PROFILE || file.default_profile || 'default'
}

/**
 * Pure resolution of the base URL and the credentials (flags > environment > profile).
 * `keyFromFile` is the content of `--token-key-file` when that flag was given.
 */
export function resolveSettings(
  flags: GlobalFlags,
  env: Record<string, string | undefined>,
  file: ConfigFile,
  cfgPath: string,
  keyFromFile?: string,
): Settings {
  const name = profileName(flags, env, file)
  const prof = file.profiles[name] ?? {}
  const url = (flags.url || env.EDGEHOUND_URL || prof.url || undefined)?.replace(/\/+$/, '')
  if (url !== undefined && !/^https?:\/\/[^/]+/i.test(url)) throw new UsageError(`the server URL must start with http:// or https:// (got "${url}")`)

  let credentials: Credentials = { kind: 'none' }
  let source = 'none'
  const fromFlag = flags['token-id']
  const fromEnv = env.EDGEHOUND_TOKEN_ID
  if (fromFlag || fromEnv || keyFromFile !== undefined || env.EDGEHOUND_TOKEN_KEY) {
    const tokenId = fromFlag || fromEnv || prof.token_id
    const origin = fromFlag ? '--token-id' : fromEnv ? 'EDGEHOUND_TOKEN_ID' : `profile "${name}"`
    if (!tokenId)
      throw new UsageError(
        `a token key was given (${keyFromFile !== undefined ? '--token-key-file' : 'EDGEHOUND_TOKEN_KEY'}) without a token id: pass --token-id or set EDGEHOUND_TOKEN_ID`,
      )
    // The key must come from a source that belongs with this id: a key file, the environment, or the
    // profile only when the profile names the same token.
    const key = keyFromFile ?? env.EDGEHOUND_TOKEN_KEY ?? (prof.token_id === tokenId ? prof.token_key : undefined)
    if (!key)
      throw new UsageError(
        `no key for token ${tokenId} (from ${origin}): set EDGEHOUND_TOKEN_KEY or pass --token-key-file PATH; keys are never taken as arguments`,
      )
    credentials = { kind: 'token', tokenId, tokenKey: key }
    source = origin
  } else if (env.EDGEHOUND_SESSION) {
    credentials = { kind: 'bearer', jwt: env.EDGEHOUND_SESSION }
    source = 'EDGEHOUND_SESSION'
  } else if (prof.token_id && prof.token_key) {
    credentials = { kind: 'token', tokenId: prof.token_id, tokenKey: prof.token_key }
    source = `profile "${name}" (token ${prof.token_id})`
  } else if (prof.session_token) {
    credentials = { kind: 'bearer', jwt: prof.session_token }
    source = `profile "${name}" (session${prof.username ? ` of ${prof.username}` : ''})`
  }
  return { url, credentials, profileName: name, configPath: cfgPath, credentialSource: source }
}

/** Reads the expiry of a session JWT without verifying it (display only; the server decides). */
export function jwtExpiry(jwt: string): Date | null {
  const part = jwt.split('.')[1]
  if (!part) return null
  try {
    const json = JSON.parse(Buffer.from(part.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8')) as { exp?: unknown }
    return typeof json.exp === 'number' ? new Date(json.exp * 1000) : null
  } catch {
    return null
  }
}
