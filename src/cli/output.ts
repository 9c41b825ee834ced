import { EdgeHoundError } from '../client'
import type { CliIO } from './io'
import { CliError } from './errors'

/** Printing helpers shared by every command: plain text for people, `--json` for programs. */
export class Output {
  constructor(
    readonly io: CliIO,
    readonly json: boolean,
  ) {}

  line(text = '') {
    this.io.stdout.write(text + '\n')
  }

  info(text: string) {
    this.io.stderr.write(text + '\n')
  }

  /** JSON on stdout (pretty-printed, one document per command). */
  data(value: unknown) {
    this.io.stdout.write(JSON.stringify(value, null, 2) + '\n')
  }

  table(rows: Record<string, unknown>[], columns: string[]) {
    for (const line of formatTable(rows, columns)) this.line(line)
  }

  keyValues(pairs: [string, unknown][]) {
    const w = Math.max(0, ...pairs.map(([k]) => k.length))
    for (const [k, v] of pairs) if (v !== undefined && v !== null && v !== '') this.line(`${(k + ':').padEnd(w + 1)} ${cell(v)}`)
  }
}

export function cell(v: unknown): string {
  if (v === undefined || v === null) return ''
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

export function formatTable(rows: Record<string, unknown>[], columns: string[]): string[] {
  const cells = rows.map((r) => columns.map((c) => cell(r[c]).replace(/\s+/g, ' ')))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)))
  const fmt = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]))).join('  ').trimEnd()
  return [fmt(columns.map((c) => c.toUpperCase())), ...cells.map(fmt)]
}

/** What a 401 means, by how the refused request authenticated (EdgeHoundError.auth). */
export function unauthorizedHint(err: EdgeHoundError): string {
  switch (err.auth) {
    case 'password':
      return 'the server refused this user name and password (or the account is disabled or locked): check them and run `edgehound login` again'
    case 'token':
      return 'the signed request was refused: check the token id and key (EDGEHOUND_TOKEN_ID / EDGEHOUND_TOKEN_KEY, --token-key-file or the profile) and that the token is not revoked'
    case 'bearer':
      return 'the session was refused (expired, or ended by a log-out): run `edgehound login` again'
    case 'none':
      return 'no credentials were sent: run `edgehound login`, or set EDGEHOUND_TOKEN_ID and EDGEHOUND_TOKEN_KEY'
    default:
      return 'check the token id and key, or run `edgehound login` again'
  }
}

/**
 * Prints a failure and returns the exit status. API errors print the envelope's messages (and its
 * request id, which is what an operator looks up in the logs); with `--json` the envelope itself.
 */
export function reportError(io: CliIO, json: boolean, err: unknown): number {
  if (err instanceof EdgeHoundError) {
    const env = err.envelope
    if (json) {
      io.stderr.write(JSON.stringify(env ?? { http_status: err.status, errors: [{ context: '', message: err.message }] }) + '\n')
      return 1
    }
    const details = env?.errors?.length ? env.errors : [{ context: '', message: `HTTP ${err.status} with no error envelope` }]
    for (const d of details) io.stderr.write(`error: ${d.message}${d.context ? ` [${d.context}]` : ''}\n`)
    io.stderr.write(`  (HTTP ${err.status}${env?.request_id ? `, request id ${env.request_id}` : ''})\n`)
    if (err.status === 401) io.stderr.write(`  hint: ${unauthorizedHint(err)}\n`)
    return 1
  }
  if (err instanceof CliError) {
    if (json) io.stderr.write(JSON.stringify({ error: err.message }) + '\n')
    else io.stderr.write(`error: ${err.message}\n`)
    if (err.exitCode === 2 && !json) io.stderr.write('  (see --help)\n')
    return err.exitCode
  }
  const e = err as Error & { cause?: { code?: string; message?: string } }
  // fetch() reports network trouble as "fetch failed" with the real reason in `cause`.
  const msg =
    e?.message === 'fetch failed' && e.cause
      ? `cannot reach the server: ${e.cause.message ?? ''}${e.cause.code && !String(e.cause.message).includes(e.cause.code) ? ` (${e.cause.code})` : ''}`
      : String(e?.message ?? err)
  if (json) io.stderr.write(JSON.stringify({ error: msg }) + '\n')
  else io.stderr.write(`error: ${msg}\n`)
  return 1
}
