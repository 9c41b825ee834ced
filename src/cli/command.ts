/// <reference types="node" />
import { parseArgs } from 'node:util'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { BookmarkMemory, EdgeHoundClient } from '../client'
import { configPath, readConfigFile, resolveSettings, type ConfigFile, type GlobalFlags, type Settings } from './config'
import { CliError, UsageError } from './errors'
import type { CliIO } from './io'
import { Output } from './output'

export interface OptionSpec {
  type: 'string' | 'boolean'
  short?: string
  multiple?: boolean
  /** placeholder shown in help, e.g. FILE */
  value?: string
  description: string
}

export interface Command {
  /** words after `edgehound`, e.g. `token create` */
  name: string
  summary: string
  /** positional part of the usage line, e.g. `NAME METADATA.xml` */
  args?: string
  description?: string
  options?: Record<string, OptionSpec>
  minArgs?: number
  maxArgs?: number
  /** false for commands that work without a server (none today, kept explicit) */
  needsServer?: boolean
  run(ctx: Context, args: string[], opts: Record<string, string | boolean | string[] | undefined>): Promise<number>
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', value: 'URL', description: 'server base URL (env EDGEHOUND_URL)' },
  profile: { type: 'string', value: 'NAME', description: 'profile in the profile file (env EDGEHOUND_PROFILE; default "default")' },
  config: { type: 'string', value: 'FILE', description: 'profile file (env EDGEHOUND_CONFIG; default ~/.config/edgehound/config.json)' },
  'token-id': { type: 'string', value: 'ID', description: 'API token id (env EDGEHOUND_TOKEN_ID)' },
  'token-key-file': { type: 'string', value: 'FILE', description: 'read the token key from FILE, "-" for stdin (env EDGEHOUND_TOKEN_KEY)' },
  json: { type: 'boolean', description: 'print JSON instead of text' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
}

/** Options that would carry a secret: refused with an explanation instead of "unknown option". */
const SECRET_FLAGS = ['token-key', 'key', 'password', 'secret']

/** What a command gets: output, settings, a client built on demand, and the outside world. */
export class Context {
  readonly out: Output
  private settingsCache?: Settings
  private fileCache?: ConfigFile
  /**
   * The newest `X-D1-Bookmark` of this run, shared by every client the command builds, so a command's
   * reads see its own writes (an upload then the job's state, a token created then used) even when reads
   * are served by D1 replicas (docs/scale.md). Kept for the run only, not in the profile file.
   */
  readonly bookmarks = new BookmarkMemory()

  constructor(
    readonly io: CliIO,
    readonly flags: GlobalFlags & { json?: boolean },
  ) {
    this.out = new Output(io, !!flags.json)
  }

  get json(): boolean {
    return !!this.flags.json
  }

  get configPath(): string {
    return configPath(this.flags, this.io.env, this.io.homedir)
  }

  async configFile(): Promise<ConfigFile> {
    this.fileCache ??= await readConfigFile(this.configPath, (m) => this.out.info(m))
    return this.fileCache
  }

  async settings(): Promise<Settings> {
    if (this.settingsCache) return this.settingsCache
    let keyFromFile: string | undefined
    const keyFile = this.flags['token-key-file']
    if (keyFile !== undefined) {
      const bytes = keyFile === '-' ? await this.io.readStdin() : await readFile(this.resolvePath(keyFile)).catch((e: Error) => {
        throw new CliError(`cannot read the token key file: ${e.message}`)
      })
      keyFromFile = new TextDecoder().decode(bytes).trim()
      if (!keyFromFile) throw new CliError('the token key file is empty')
    }
    this.settingsCache = resolveSettings(this.flags, this.io.env, await this.configFile(), this.configPath, keyFromFile)
    return this.settingsCache
  }

  /** A signing client for the configured server; fails with a clear message when something is missing. */
  async client(opts: { requireAuth?: boolean } = {}): Promise<EdgeHoundClient> {
    const s = await this.settings()
    if (!s.url)
      throw new UsageError('no server URL: pass --url, set EDGEHOUND_URL, or run `edgehound login --url URL` to store it in a profile')
    if (opts.requireAuth !== false && s.credentials.kind === 'none')
      throw new UsageError(
        'no credentials: run `edgehound login`, or set EDGEHOUND_TOKEN_ID and EDGEHOUND_TOKEN_KEY (or store a token with `edgehound token create NAME --save`)',
      )
    return new EdgeHoundClient({
      baseUrl: s.url,
      credentials: s.credentials,
      fetch: this.io.fetch,
      now: this.io.now,
      bookmarks: this.bookmarks,
      // a rate-limited request did not run: wait it out rather than fail a script (docs/cli.md)
      busyRetry: {
        retries: 3,
        maxWaitSeconds: 60,
        sleep: (ms) => this.io.sleep(ms),
        // with --json, standard error carries only the final envelope
        onWait: (status, seconds) => (this.json ? undefined : this.out.info(`server busy (HTTP ${status}); retrying in ${seconds} s`)),
      },
    })
  }

  resolvePath(p: string): string {
    return path.resolve(this.io.cwd, p)
  }

  /** Reads `@file`, `@-` (stdin) or a literal string into bytes. */
  async readDataArg(value: string): Promise<{ bytes: Uint8Array; file?: string }> {
    if (value === '@-') return { bytes: await this.io.readStdin() }
    if (value.startsWith('@')) {
      const file = this.resolvePath(value.slice(1))
      try {
        return { bytes: new Uint8Array(await readFile(file)), file }
      } catch (e) {
        throw new CliError(`cannot read ${value.slice(1)}: ${(e as Error).message}`)
      }
    }
    return { bytes: new TextEncoder().encode(value) }
  }
}

type Parsed = { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] }

function toParseArgs(specs: Record<string, OptionSpec>) {
  const out: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {}
  for (const [name, s] of Object.entries(specs)) out[name] = { type: s.type, ...(s.short ? { short: s.short } : {}), ...(s.multiple ? { multiple: true } : {}) }
  return out
}

export function parse(argv: string[], specs: Record<string, OptionSpec>, strict: boolean): Parsed {
  for (const a of argv) {
    if (a === '--') break
    const m = /^--([^=]+)/.exec(a)
    if (m && SECRET_FLAGS.includes(m[1]))
      throw new UsageError(
        `--${m[1]} is not accepted: secrets on the command line end up in shell history and process listings. ` +
          (m[1] === 'password'
            ? 'Type the password at the prompt, pipe it with --password-stdin, or set EDGEHOUND_PASSWORD.'
            : 'Set EDGEHOUND_TOKEN_KEY, pass --token-key-file FILE (or - for stdin), or store the token in a profile.'),
      )
  }
  try {
    const r = parseArgs({ args: argv, options: toParseArgs(specs), allowPositionals: true, strict })
    return { values: r.values as Parsed['values'], positionals: r.positionals }
  } catch (e) {
    throw new UsageError((e as Error).message.split('. To specify')[0])
  }
}

function optionLines(specs: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(specs).map(([name, s]) => [
    `${s.short ? `-${s.short}, ` : '    '}--${name}${s.type === 'string' ? ` ${s.value ?? 'VALUE'}` : ''}`,
    s.description + (s.multiple ? ' (repeatable)' : ''),
  ])
  const w = Math.max(...rows.map((r) => r[0].length))
  return rows.map(([a, b]) => `  ${a.padEnd(w)}  ${b}`)
}

export function commandHelp(cmd: Command): string {
  const lines = [`Usage: edgehound ${cmd.name}${cmd.args ? ` ${cmd.args}` : ''} [options]`, '', cmd.summary]
  if (cmd.description) lines.push('', cmd.description)
  if (cmd.options && Object.keys(cmd.options).length) lines.push('', 'Options:', ...optionLines(cmd.options))
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS))
  return lines.join('\n') + '\n'
}

export function groupHelp(prefix: string, cmds: Command[]): string {
  const w = Math.max(...cmds.map((c) => c.name.length + (c.args ? c.args.length + 1 : 0)))
  const lines = [
    `Usage: edgehound ${prefix ? prefix + ' ' : ''}<command> [options]`,
    '',
    'Commands:',
    ...cmds.map((c) => `  ${(c.name + (c.args ? ' ' + c.args : '')).padEnd(w)}  ${c.summary}`),
    '',
    `Run \`edgehound ${prefix ? prefix + ' ' : ''}<command> --help\` for the options of a command.`,
  ]
  if (!prefix)
    lines.push(
      '',
      'Configuration (highest first): flags, environment variables (EDGEHOUND_URL, EDGEHOUND_TOKEN_ID,',
      'EDGEHOUND_TOKEN_KEY, EDGEHOUND_SESSION, EDGEHOUND_PROFILE, EDGEHOUND_CONFIG), then the profile file.',
      'Keys and passwords are never taken as arguments. Exit status: 0 ok, 1 failure, 2 usage error.',
      '',
      'Global options:',
      ...optionLines(GLOBAL_OPTIONS),
    )
  return lines.join('\n') + '\n'
}
