/// <reference types="node" />
import path from 'node:path'
import { readFile } from 'node:fs/promises'
import { EdgeHoundError } from '../../client'
import type { Command } from '../command'
import { CliError, UsageError } from '../errors'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** Content type for a body read from a file, by extension; JSON otherwise (the API's default). */
export function contentTypeFor(file: string | undefined, bytes: Uint8Array): string {
  const ext = file ? path.extname(file).toLowerCase() : ''
  if (ext === '.zip' || (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04)) return 'application/zip'
  if (ext === '.xml') return 'application/xml'
  if (ext === '.txt' || ext === '.md') return 'text/plain'
  return 'application/json'
}

function parseHeader(h: string): [string, string] {
  const i = h.indexOf(':')
  if (i <= 0) throw new UsageError(`--header must look like "Name: value" (got "${h}")`)
  return [h.slice(0, i).trim(), h.slice(i + 1).trim()]
}

export const request: Command = {
  name: 'request',
  summary: 'Send a signed request, like curl, and print the response body',
  args: 'METHOD PATH',
  description:
    'PATH is the path and query string, signed exactly as written (for example\n' +
    '"/api/v2/domains/S-1-5-21-1/details?finding=T0GenericAll&skip=0"). A non-2xx answer prints the error\n' +
    "envelope's messages on standard error and exits with status 1.",
  minArgs: 2,
  maxArgs: 2,
  options: {
    data: { type: 'string', short: 'd', value: 'DATA', description: 'request body: text, @FILE, or @- for stdin' },
    form: { type: 'string', short: 'F', multiple: true, value: 'NAME=VALUE', description: 'multipart field; NAME=@FILE attaches a file' },
    header: { type: 'string', short: 'H', multiple: true, value: '"NAME: VALUE"', description: 'extra request header' },
    'content-type': { type: 'string', value: 'TYPE', description: 'content type of --data (default: from the file name, else application/json)' },
    include: { type: 'boolean', short: 'i', description: 'print the status line and response headers first' },
  },
  async run(ctx, [methodArg, target], opts) {
    const method = methodArg.toUpperCase()
    if (!METHODS.includes(method)) throw new UsageError(`unknown method "${methodArg}": use one of ${METHODS.join(', ')}`)
    if (!target.startsWith('/')) throw new UsageError('PATH must start with "/" (the server comes from --url, EDGEHOUND_URL or the profile)')
    if (opts.data !== undefined && opts.form) throw new UsageError('use either --data or --form, not both')

    const headers: Record<string, string> = {}
    for (const h of (opts.header as string[] | undefined) ?? []) {
      const [k, v] = parseHeader(h)
      if (['authorization', 'requestdate', 'signature'].includes(k.toLowerCase()))
        throw new UsageError(`--header ${k} is set by the signing client and cannot be given`)
      headers[k] = v
    }
    let body: Uint8Array | FormData | undefined
    let contentType = opts['content-type'] as string | undefined
    if (opts.data !== undefined) {
      const d = await ctx.readDataArg(opts.data as string)
      body = d.bytes
      contentType ??= contentTypeFor(d.file, d.bytes)
    } else if (opts.form) {
      const form = new FormData()
      for (const f of opts.form as string[]) {
        const eq = f.indexOf('=')
        if (eq <= 0) throw new UsageError(`--form must look like NAME=VALUE or NAME=@FILE (got "${f}")`)
        const name = f.slice(0, eq)
        const value = f.slice(eq + 1)
        if (value.startsWith('@')) {
          const file = ctx.resolvePath(value.slice(1))
          const bytes = await readFile(file).catch((e: Error) => {
            throw new CliError(`cannot read ${value.slice(1)}: ${e.message}`)
          })
          form.append(name, new Blob([new Uint8Array(bytes)], { type: contentTypeFor(file, bytes) }), path.basename(file))
        } else form.append(name, value)
      }
      body = form
    }

    const c = await ctx.client({ requireAuth: false })
    const res = await c.raw(method, target, body, { headers, contentType, exactTarget: true })
    const text = method === 'HEAD' ? '' : await res.text()
    const resHeaders = Object.fromEntries([...res.headers.entries()])
    if (ctx.json) {
      let parsed: unknown = text
      if ((res.headers.get('content-type') ?? '').includes('json') && text) {
        try {
          parsed = JSON.parse(text)
        } catch {
          /* keep the text */
        }
      }
      ctx.out.data({ status: res.status, headers: resHeaders, body: parsed })
    } else {
      if (opts.include) {
        ctx.out.line(`HTTP ${res.status} ${res.statusText}`.trimEnd())
        for (const [k, v] of Object.entries(resHeaders)) ctx.out.line(`${k}: ${v}`)
        ctx.out.line()
      }
      if (res.ok || opts.include) if (text) ctx.io.stdout.write(text.endsWith('\n') ? text : text + '\n')
    }
    if (!res.ok) throw EdgeHoundError.of(res, text, target.split('?')[0] === '/api/v2/login' ? 'password' : c.credentials.kind)
    return 0
  },
}
