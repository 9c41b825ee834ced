import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { loadKindCatalog } from './catalog'
import { auditOf } from '../audit/audit'
import { deleteExtension, ExtensionWriteConflict, getExtension, getExtensionDocument, listExtensions, upsertExtension } from './extensions.store'
import { deletionBlockers, describeExtension, installedState } from './rules'
import { ExtensionDocumentSchema } from './schema'
import { validateExtension } from './validate'

/**
 * Graph extensions (issue 4; spec section B). PUT and DELETE need `graph/ManageExtensions` (Administrator
 * only); the reads need `graph/Read`: kinds, icons and finding texts are what every graph reader is shown
 * anyway, and nothing in an extension document is secret (docs/extensions.md).
 */

/**
 * The body is declared as "any JSON" so that the handler can report shape AND rule violations together;
 * the OpenAPI document still shows the document's JSON Schema (carried as metadata).
 */
const documentJsonSchema = (() => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(ExtensionDocumentSchema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  return rest
})()
const AnyJsonDocument = z.unknown().meta({ ...documentJsonSchema, description: 'a graph extension document' })

const ExtensionSummarySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    display_name: z.string(),
    namespace: z.string(),
    version: z.string(),
    is_builtin: z.boolean(),
  })
  .meta({ description: 'an installed graph extension' })

const UpsertResult = z.object({
  data: ExtensionSummarySchema.extend({
    created: z.boolean().describe('true when this request created the extension, false when it updated it'),
    node_kinds: z.number().int().describe('number of node kinds'),
    relationship_kinds: z.number().int(),
    environments: z.number().int(),
    relationship_findings: z.number().int(),
  }),
})

const IdParams = z.object({
  id: z
    .string()
    .regex(/^[0-9]{1,10}$/, 'id is malformed')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 2147483647, 'id is malformed')
    .describe('extension id (from the list)'),
})

const MAX_BODY = 10 * 1024 * 1024

function notFound(id: number): ApiError {
  return new ApiError(404, `no extension found matching extension id: ${id}`, 'id')
}

export const extensionRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/extensions',
      operationId: 'UpsertGraphExtension',
      // the extension's name and version (the document itself is not copied into the log)
      audit: {
        action: 'CreateGraphSchemaExtension',
        fields: ({ body }) => {
          const schema = (body as { schema?: { name?: unknown; version?: unknown } } | null)?.schema
          return { name: typeof schema?.name === 'string' ? schema.name.slice(0, 200) : undefined, version: typeof schema?.version === 'string' ? schema.version.slice(0, 50) : undefined }
        },
      },
      summary: 'Create or update a graph extension (upsert keyed by schema.name)',
      description:
        'Validates the whole document and reports every violation at once (each error context is a JSON path). ' +
        'Child sets are reconciled by name in one atomic write. Built-in extensions cannot be modified.',
      tags: ['Graph Extensions'],
      auth: 'graph/ManageExtensions',
      replay: { repeatable: 'an idempotent upsert: the same schema applied again answers created: false' },
      body: { kind: 'json', schema: AnyJsonDocument, maxBytes: MAX_BODY },
      responses: { 200: { description: 'created or updated', schema: UpsertResult } },
    },
    async (c, { body }) => {
      const db = c.env.DB
      const result = validateExtension(body, installedState(await loadKindCatalog(db)))
      if (!result.ok) throw ApiError.many(400, result.errors)
      const doc = result.doc
      let written: { id: number; created: boolean }
      try {
        written = await upsertExtension(db, doc, rfc3339(c.var.now()), auditOf(c).write())
      } catch (e) {
        if (!(e instanceof ExtensionWriteConflict)) throw e
        // A concurrent write changed the installed state between validation and the batch, and the
        // database refused (nothing was written). Validate again against the new state to name the cause.
        const again = validateExtension(body, installedState(await loadKindCatalog(db)))
        if (!again.ok) throw ApiError.many(400, again.errors)
        throw new ApiError(409, 'a concurrent change to the installed extensions conflicts with this payload; retry the request', 'body')
      }
      return c.json({
        data: {
          id: written.id,
          name: doc.schema.name,
          display_name: doc.schema.display_name || doc.schema.name,
          version: doc.schema.version,
          namespace: doc.schema.namespace,
          is_builtin: false,
          created: written.created,
          node_kinds: doc.node_kinds.length,
          relationship_kinds: doc.relationship_kinds.length,
          environments: doc.environments.length,
          relationship_findings: doc.relationship_findings.length,
        },
      })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/extensions',
      operationId: 'ListGraphExtensions',
      summary: 'List installed graph extensions (built-ins included), by display name',
      tags: ['Graph Extensions'],
      auth: 'graph/Read',
      responses: {
        200: { description: 'installed extensions', schema: z.object({ data: z.object({ extensions: z.array(ExtensionSummarySchema) }) }) },
      },
    },
    async (c) => c.json({ data: { extensions: await listExtensions(c.env.DB) } }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/extensions/:id',
      operationId: 'GetGraphExtension',
      summary: 'Read an extension back: the full document as it was last PUT',
      tags: ['Graph Extensions'],
      auth: 'graph/Read',
      params: IdParams,
      responses: { 200: { description: 'the stored document', schema: z.object({ data: ExtensionDocumentSchema }) } },
    },
    async (c, { params }) => {
      const found = await getExtensionDocument(c.env.DB, params.id)
      if (!found) throw notFound(params.id)
      return c.json({ data: found.doc })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/extensions/:id',
      operationId: 'DeleteGraphExtension',
      audit: { action: 'DeleteGraphSchemaExtension', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Delete an extension with all its kinds, environments and findings (built-ins cannot be deleted)',
      tags: ['Graph Extensions'],
      auth: 'graph/ManageExtensions',
      replay: { repeatable: 'deleting again answers 404 and changes nothing' },
      params: IdParams,
      responses: {
        200: {
          description: 'deleted',
          schema: z.object({ data: z.object({ id: z.number().int(), name: z.string(), deleted: z.literal(true) }) }),
        },
      },
    },
    async (c, { params }) => {
      const db = c.env.DB
      const ext = await getExtension(db, params.id)
      if (!ext) throw notFound(params.id)
      if (ext.is_builtin) throw new ApiError(400, 'built-in extensions cannot be deleted', 'id')
      const blockers = (catalogBlockers: string[]) => {
        if (catalogBlockers.length > 0)
          throw ApiError.many(
            400,
            catalogBlockers.map((m) => ({ context: 'id', message: `${describeExtension({ name: ext.name, displayName: ext.display_name, isBuiltin: false })} cannot be deleted: ${m}` })),
          )
      }
      blockers(deletionBlockers(ext.name, installedState(await loadKindCatalog(db))))
      let deleted: { id: number; name: string } | null
      try {
        deleted = await deleteExtension(db, params.id, rfc3339(c.var.now()), auditOf(c).write({ name: ext.name }))
      } catch (e) {
        if (!(e instanceof ExtensionWriteConflict)) throw e
        blockers(deletionBlockers(ext.name, installedState(await loadKindCatalog(db))))
        throw new ApiError(409, 'a concurrent change to the installed extensions conflicts with this deletion; retry the request', 'id')
      }
      if (!deleted) throw notFound(params.id)
      return c.json({ data: { id: deleted.id, name: deleted.name, deleted: true as const } })
    },
  ),
]
