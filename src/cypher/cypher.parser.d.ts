// Types for the generated parser (cypher.parser.js).
import type { Query } from './ast'

export interface PeggyLocation {
  start: { offset: number; line: number; column: number }
  end: { offset: number; line: number; column: number }
}

export declare class SyntaxError extends Error {
  location: PeggyLocation
  expected: unknown
  found: string | null
}

export declare function parse(input: string, options?: { startRule?: 'Query' }): Query
