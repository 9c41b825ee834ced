import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { ApiError, rfc3339 } from '../http/errors'
import { auditInsert, type AuditRowInput } from './audit.store'
import type { AuditAction } from './actions'
import { boundFields, scrubFields } from './fields'
import { environmentsColumn, type AuditEnvironments } from './visibility'

/**
 * Audit entries (docs/audit.md). Auditing is declared on the route definition (`audit` in
 * src/http/route.ts), like the route's permission; `defineRoute` then:
 *
 *  1. writes the `intent` row once the request is authenticated, permitted and valid (before any change);
 *  2. gives the handler `c.var.audit`, whose `write()` hands the handler an {@link AuditWrite}: the
 *     `success` row as a statement, which the store appends to the very D1 batch that makes the change
 *     (`auditedBatch` in audit.store.ts — the one mechanism). D1 runs a batch as one transaction, so the
 *     change and its success row commit together or not at all;
 *  3. writes a `failure` row when the handler throws before that batch committed (no change happened).
 *
 * Reasoning about secrets: `fields` is built only from values a route's declaration or handler names
 * explicitly, and {@link scrubFields} drops, as a second line of defence, any key that names a secret
 * (passwords, keys, tokens, private parts of certificates) before the row is written. Fields are never cut
 * (src/audit/fields.ts), and each row names the environments it concerns (src/audit/visibility.ts), from the
 * declaration's `environments`, so that a reader restricted to some environments is served it redacted.
 */
export { scrubFields } from './fields'

export { AUDIT_ACTIONS, type AuditAction } from './actions'
export type AuditStatus = 'intent' | 'success' | 'failure'

export type AuditFields = Record<string, unknown>

export interface AuditInput {
  params: unknown
  query: unknown
  body: unknown
}

/** What a route declares. `exempt` is for non-GET routes that change nothing (the reason is documented). */
export type AuditDecl =
  | {
      /** a fixed action, or one chosen from the validated input (e.g. AcceptRisk / UnacceptRisk) */
      action: AuditAction | ((input: AuditInput) => AuditAction)
      /** the fields of the entry taken from the validated input (never a secret) */
      fields?: (input: AuditInput) => AuditFields
      /** false: no intent row (login: nobody is known before the credential is checked) */
      intent?: boolean
      /**
       * The environments the entry concerns (object ids' environments, a finding's, the environments a user is
       * given), computed before the intent row; `'unknown'` when they cannot be known (a Cypher rule). Required
       * in effect for the actions src/audit/visibility.ts classifies as environment-scoped: without it their
       * rows are `unknown` and served redacted to every restricted reader.
       */
      environments?: (input: AuditInput, c: Context<AppEnv>) => AuditEnvironments | Promise<AuditEnvironments>
    }
  | { exempt: string }

/**
 * The outcome row of one request (success, or the failure a route records in its own ledger), to be
 * appended to the batch that makes the change (see auditedBatch).
 */
export interface AuditWrite {
  /**
   * `ifChanged`: written only if the statement before it changed a row. `more`: fields known only once the
   * store built its batch (counts). `computed`: fields whose value is an SQL scalar expression evaluated in
   * the batch (an id the change's own INSERT assigns); fixed text from a *.store.ts, never user input.
   */
  statement(db: D1Database, ifChanged?: boolean, more?: AuditFields, computed?: Record<string, string>): D1PreparedStatement
  /** set by auditedBatch once the batch (change + row) has committed */
  committed: boolean
}

export interface Actor {
  id: string
  name: string
}

export class AuditScope {
  readonly commitId = crypto.randomUUID()
  private fields: AuditFields
  private actor: Actor | null
  private writes: AuditWrite[] = []
  /** the environments of the request's rows (declaration's `environments`); undefined: none computed */
  environments: AuditEnvironments | undefined

  constructor(
    readonly action: AuditAction,
    private readonly c: Context<AppEnv>,
    fields: AuditFields,
  ) {
    this.fields = fields
    const p = c.get('principal')
    this.actor = p ? { id: p.userId, name: p.principalName } : null
  }

  /** Names the actor when authentication happens inside the handler (login). */
  setActor(actor: Actor): void {
    this.actor = actor
  }

  /** Adds fields known only to the handler (ids it created, what it changed). */
  addFields(extra: AuditFields): void {
    this.fields = { ...this.fields, ...extra }
  }

  /**
   * The success row, for the store to append to its batch (`auditedBatch(db, statements, audit)`).
   * `action` names a secondary change of the same request (a SAML sign-in that provisions its user writes
   * `CreateUser` as well as `LoginAttempt`); it shares the request's commit id.
   */
  write(extra: AuditFields = {}, action?: AuditAction): AuditWrite {
    if (action && action !== this.action) {
      const fields = { ...extra }
      return { statement: (db, ifChanged, more, computed) => this.row(db, 'success', more, ifChanged, action, fields, computed), committed: false }
    }
    this.addFields(extra)
    const w: AuditWrite = { statement: (db, ifChanged, more, computed) => this.row(db, 'success', more, ifChanged, this.action, undefined, computed), committed: false }
    this.writes.push(w)
    return w
  }

  /**
   * The failure row, for a route that records its own failure in a ledger (an upload whose file failed is
   * counted in its job): the ledger's change and this row are then one batch, and no second failure row is
   * written once it committed. `err` gives the message, as for a thrown error (never internals).
   */
  writeFailure(err: unknown, extra: AuditFields = {}): AuditWrite {
    const error = failureMessage(err)
    const w: AuditWrite = {
      statement: (db, ifChanged, more, computed) => this.row(db, 'failure', { ...extra, ...more, error }, ifChanged, this.action, undefined, computed),
      committed: false,
    }
    this.writes.push(w)
    return w
  }

  /** The request failed without throwing (a sign-in refused with a redirect): its outcome is a failure row. */
  markFailed(reason: string): void {
    this.failedReason = reason
  }

  failedReason: string | null = null

  /**
   * The request succeeded and changed nothing (a PATCH naming no change): its success row, `changed: false`,
   * is written on its own, since there is no change whose batch could carry it.
   */
  markUnchanged(): void {
    this.unchanged = true
  }

  unchanged = false

  /** An outcome row (success or a ledger's failure) of this request committed in its change's batch. */
  get committed(): boolean {
    return this.writes.some((w) => w.committed)
  }

  row(
    db: D1Database,
    status: AuditStatus,
    extra: AuditFields = {},
    ifChanged = false,
    action: AuditAction = this.action,
    own?: AuditFields,
    computed?: Record<string, string>,
  ): D1PreparedStatement {
    const c = this.c
    const input: AuditRowInput = {
      created_at: rfc3339(c.var.now ? c.var.now() : new Date()),
      actor_id: this.actor?.id ?? '',
      actor_name: this.actor?.name ?? '',
      action,
      fields: boundFields((scrubFields({ ...(own ?? this.fields), ...extra }) ?? {}) as AuditFields),
      environments: environmentsColumn(action, this.environments),
      request_id: c.var.requestId,
      source_ip_address: c.req.header('cf-connecting-ip') ?? '',
      status,
      commit_id: this.commitId,
    }
    return auditInsert(db, input, ifChanged, computed)
  }
}

export function resolveAction(decl: Exclude<AuditDecl, { exempt: string }>, input: AuditInput): AuditAction {
  return typeof decl.action === 'function' ? decl.action(input) : decl.action
}

/** The audit scope of the current request; a handler of a route without an audit declaration gets a 500. */
export function auditOf(c: Context<AppEnv>): AuditScope {
  const a = c.get('audit')
  if (!a) throw new Error(`route ${c.get('routeTemplate')} writes audit entries but declares none`)
  return a
}

/** The message recorded on a failure row: an ApiError's own (client-facing) message, never internals. */
export function failureMessage(err: unknown): string {
  if (err instanceof ApiError) return err.details.map((d) => d.message).join('; ').slice(0, 500)
  return 'internal error'
}
