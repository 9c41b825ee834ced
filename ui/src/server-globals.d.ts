/**
 * The console type-checks with the browser's types (lib DOM), but the typed client it shares with the CLI and
 * the tests (src/client) imports a few *types* from server modules, and those mention Workers-only globals.
 * None of them is used by the console at run time (the imports are `import type`, or functions the console
 * never calls), so they are declared here as opaque names: enough for `tsc -p ui/tsconfig.json` to check the
 * console's own code strictly without pulling the Workers runtime types, which conflict with lib DOM.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
interface D1Result<T = unknown> { results: T[]; success: boolean; meta: any }
interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement
  first<T = unknown>(column?: string): Promise<T | null>
  all<T = unknown>(): Promise<D1Result<T>>
  run<T = unknown>(): Promise<D1Result<T>>
  raw<T = unknown[]>(): Promise<T[]>
}
interface D1Database {
  prepare(query: string): D1PreparedStatement
  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>
}
declare type Env = Record<string, any>
interface SubtleCrypto {
  /** Workers-only (used by src/auth/encoding.ts on the server, never in the browser) */
  timingSafeEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean
}
