/**
 * Saved queries in and out of the service as files, in BloodHound's transfer format: one JSON object
 * `{query, name, description}` per query; an export of several is a zip of `<name>.json` files; an import takes
 * one such JSON file or a zip of them. Pure: bytes in, bytes out; the routes and the store do the rest.
 *
 * Bounds, so that neither direction costs more than a request may: an import is at most IMPORT_MAX_BYTES on the
 * wire, IMPORT_MAX_FILES members of at most IMPORT_MAX_FILE_BYTES each once inflated (the zip reader in
 * src/graph/zip.ts stops inflating at that size, whatever a member declares); an export at most
 * EXPORT_MAX_QUERIES queries and EXPORT_MAX_BYTES of text.
 */
import { strToU8, zipSync } from 'fflate'
import { z } from 'zod'
import { ApiError } from '../http/errors'
import { ZipError, inflateMember, listZip } from '../graph/zip'

export const IMPORT_MAX_BYTES = 4 * 1024 * 1024
export const IMPORT_MAX_FILES = 1_000
export const IMPORT_MAX_FILE_BYTES = 128 * 1024
export const EXPORT_MAX_QUERIES = 5_000
export const EXPORT_MAX_BYTES = 16 * 1024 * 1024
export const ZIP_TYPES = ['application/zip', 'application/zip-compressed', 'application/x-zip-compressed', 'multipart/x-zip']

export const EXPORT_SCOPES = ['all', 'owned', 'shared', 'public'] as const
export type ExportScope = (typeof EXPORT_SCOPES)[number]

export const TransferableSchema = z
  .object({ query: z.string(), name: z.string(), description: z.string() })
  .meta({ id: 'TransferableSavedQuery' })
export type Transferable = z.infer<typeof TransferableSchema>

/** The same limits as a saved query created through the API. */
const ImportSchema = z.object({
  name: z.string().max(1_000, 'name must be at most 1000 characters').optional().default(''),
  query: z.string().max(64 * 1024, 'query must be at most 65536 characters').optional().default(''),
  description: z.string().max(10_000, 'description must be at most 10000 characters').optional().default(''),
})

export function transferable(q: { query: string; name: string; description: string }): Transferable {
  return { query: q.query, name: q.name, description: q.description }
}

/** The last path segment of a name, as BloodHound's `filepath.Base` names the file (never empty, never a path). */
export function fileBase(name: string): string {
  const parts = name.split('/').filter((p) => p !== '')
  const last = parts.length ? parts[parts.length - 1] : ''
  return last === '' ? '_' : last === '.' || last === '..' ? '_' : last
}

/** A Content-Disposition attachment header for a file name of any characters (RFC 6266 with RFC 5987). */
export function attachment(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`
}

export function checkExportSize(rows: { query: string; name: string; description: string }[]): void {
  if (rows.length > EXPORT_MAX_QUERIES)
    throw new ApiError(400, `the export holds more than ${EXPORT_MAX_QUERIES} queries: export a narrower scope`, 'query.scope')
  const bytes = rows.reduce((n, r) => n + r.query.length + r.name.length + r.description.length, 0)
  if (bytes > EXPORT_MAX_BYTES)
    throw new ApiError(400, `the export holds more than ${EXPORT_MAX_BYTES / 1024 / 1024} MiB of query text: export a narrower scope`, 'query.scope')
}

/**
 * A zip of `<name>.json` files. Two queries whose names end alike (`a/x` and `b/x`, or two users' queries of one
 * name in scope `all`) would share a file name; the later ones get ` (2)`, ` (3)`, … so that nothing is lost.
 */
export function exportZip(rows: { query: string; name: string; description: string }[]): Uint8Array {
  const files: Record<string, Uint8Array> = {}
  for (const r of rows) {
    const base = fileBase(r.name)
    let file = `${base}.json`
    for (let n = 2; file in files; n++) file = `${base} (${n}).json`
    files[file] = strToU8(JSON.stringify(transferable(r)))
  }
  return zipSync(files, { level: 6 })
}

/** The JSON members of an import zip, inflated within their bounds; 400 for anything that is not such an archive. */
export function importFilesFromZip(bytes: Uint8Array): { name: string; bytes: Uint8Array }[] {
  let entries
  try {
    entries = listZip(bytes)
  } catch (e) {
    if (e instanceof ZipError) throw new ApiError(400, `not a valid zip file: ${e.message}`, 'body')
    throw e
  }
  const wanted = entries.filter((e) => !e.name.endsWith('/') && !e.name.includes('__MACOSX') && !e.name.startsWith('.') && !e.name.split('/').pop()!.startsWith('.'))
  if (wanted.length === 0) throw new ApiError(400, 'the archive holds no query file', 'body')
  if (wanted.length > IMPORT_MAX_FILES) throw new ApiError(400, `the archive holds more than ${IMPORT_MAX_FILES} files`, 'body')
  return wanted.map((e) => {
    if (e.encrypted) throw new ApiError(400, `${e.name}: encrypted members are not supported`, 'body')
    if (e.size > IMPORT_MAX_FILE_BYTES) throw new ApiError(400, `${e.name}: a query file is at most ${IMPORT_MAX_FILE_BYTES / 1024} KiB`, 'body')
    const out = inflateMember(bytes, e, IMPORT_MAX_FILE_BYTES)
    if (!out.ok) throw new ApiError(400, `error during zip validation: ${e.name} is ${out.reason === 'over' ? 'larger than it declares' : 'corrupt'}`, 'body')
    return { name: e.name, bytes: out.data }
  })
}

/** One file's query; 400 naming the file when it is not `{query, name, description}` JSON with a name and a query. */
export function parseTransferable(file: string, bytes: Uint8Array): Transferable {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes))
  } catch {
    throw new ApiError(400, `failed to unmarshal json file: ${file} is not JSON`, 'body')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ApiError(400, `failed to unmarshal json file: ${file} is not a JSON object`, 'body')
  const parsed = ImportSchema.safeParse(value)
  if (!parsed.success) throw new ApiError(400, `failed to unmarshal json file: ${file}: ${parsed.error.issues[0].message}`, 'body')
  if (parsed.data.name === '' || parsed.data.query === '') throw new ApiError(400, `${file}: the name and/or query field is empty`, 'body')
  return parsed.data
}
