/// <reference types="node" />
/**
 * `edgehound`: the command-line client. `run(argv, io)` is the whole program (tests call it in-process);
 * the bottom of this file runs it when the module is the entry point (bin/edgehound.mjs imports it).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { Context, commandHelp, GLOBAL_OPTIONS, groupHelp, parse, type Command, type OptionSpec } from './command'
import { UsageError } from './errors'
import { nodeIO, type CliIO } from './io'
import { reportError } from './output'
import { login, logout, tokenCreate, tokenList, tokenRevoke } from './commands/auth'
import { request } from './commands/request'
import { ingest } from './commands/ingest'
import { extensionsDelete, extensionsList, extensionsPut, samlCreate } from './commands/admin'
import { analysisRunCmd, analysisStatusCmd } from './commands/analysis'
import { findings } from './commands/findings'
import { audit } from './commands/audit'
import { cypher, pathCmd, searchCmd } from './commands/graph'

export const COMMANDS: Command[] = [
  login,
  logout,
  tokenCreate,
  tokenList,
  tokenRevoke,
  request,
  ingest,
  samlCreate,
  extensionsPut,
  extensionsList,
  extensionsDelete,
  analysisRunCmd,
  analysisStatusCmd,
  findings,
  audit,
  cypher,
  searchCmd,
  pathCmd,
]

function version(): string {
  try {
    const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json')
    return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

function allOptions(): Record<string, OptionSpec> {
  const all: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, version: { type: 'boolean', description: 'print the version' } }
  for (const c of COMMANDS) Object.assign(all, c.options ?? {})
  return all
}

/** Longest command name matching the leading positionals (`token create` before `token`). */
function findCommand(words: string[]): { cmd?: Command; used: number; group?: string } {
  for (const n of [2, 1]) {
    const name = words.slice(0, n).join(' ')
    const cmd = COMMANDS.find((c) => c.name === name)
    if (cmd) return { cmd, used: n }
  }
  const group = words[0]
  if (group && COMMANDS.some((c) => c.name.startsWith(group + ' '))) return { used: 1, group }
  return { used: 0 }
}

export async function run(argv: string[], io: CliIO = nodeIO()): Promise<number> {
  let json = argv.includes('--json')
  try {
    // First pass (lenient): find the command words among the positionals.
    const loose = parse(argv, allOptions(), false)
    const words = loose.positionals[0] === 'help' ? loose.positionals.slice(1) : loose.positionals
    const wantsHelp = loose.values.help === true || loose.positionals[0] === 'help'
    if (loose.values.version) {
      io.stdout.write(`edgehound ${version()}\n`)
      return 0
    }
    const found = findCommand(words)
    if (!found.cmd) {
      const group = found.group
      const cmds = group ? COMMANDS.filter((c) => c.name.startsWith(group + ' ')) : COMMANDS
      const text = groupHelp(group ?? '', cmds)
      // `edgehound`, `edgehound token`: the list of commands (a usage error unless help was asked for)
      if (words.length === 0 || (group && words.length === 1)) {
        ;(wantsHelp ? io.stdout : io.stderr).write(text)
        return wantsHelp ? 0 : 2
      }
      const unknown = group ? `${group} ${words[1]}` : words[0]
      io.stderr.write(`error: unknown command "${unknown}"\n\n${text}`)
      return 2
    }
    const cmd = found.cmd
    if (wantsHelp) {
      io.stdout.write(commandHelp(cmd))
      return 0
    }
    // Second pass (strict): only the global options and this command's options are allowed.
    const strict = parse(argv, { ...GLOBAL_OPTIONS, ...(cmd.options ?? {}) }, true)
    json = strict.values.json === true
    // drop the command words (they are the first positionals)
    const args = strict.positionals.slice(found.used)
    if (args.length < (cmd.minArgs ?? 0) || args.length > (cmd.maxArgs ?? Infinity))
      throw new UsageError(`usage: edgehound ${cmd.name}${cmd.args ? ' ' + cmd.args : ''}`)
    const v = strict.values
    const ctx = new Context(io, {
      url: v.url as string | undefined,
      profile: v.profile as string | undefined,
      config: v.config as string | undefined,
      'token-id': v['token-id'] as string | undefined,
      'token-key-file': v['token-key-file'] as string | undefined,
      json,
    })
    return await cmd.run(ctx, args, v)
  } catch (e) {
    return reportError(io, json, e)
  }
}

// Entry point: `node --import tsx src/cli/main.ts ...` or bin/edgehound.mjs.
const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (invokedDirectly) {
  run(process.argv.slice(2)).then((code) => {
    process.exitCode = code
  })
}
