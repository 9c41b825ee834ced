/**
 * Seeds of asset group tag selectors (src/assetgroups/seeds.ts): BloodHound's rules and messages, and a Cypher
 * seed checked by the Cypher engine's own parser and refusals (never by searching the text).
 */
import { describe, expect, it } from 'vitest'
import { validateSeeds } from '../../src/assetgroups/seeds'
import { ApiError } from '../../src/http/errors'

function refusal(seeds: { type: number; value: string }[] | undefined): { message: string; context: string } {
  try {
    validateSeeds(seeds)
  } catch (e) {
    if (e instanceof ApiError) return { message: e.message, context: e.details[0].context }
    throw e
  }
  throw new Error('accepted')
}

describe('validateSeeds', () => {
  it('accepts object ids (trimmed) and Cypher queries the engine accepts (as written)', () => {
    expect(validateSeeds([{ type: 1, value: ' S-1-5-21-1-512 ' }, { type: 1, value: 'AZ-USER-1' }])).toEqual([
      { type: 1, value: 'S-1-5-21-1-512' },
      { type: 1, value: 'AZ-USER-1' },
    ])
    const q = "// a comment with SET in it\nMATCH (n:User) WHERE n.name CONTAINS 'SET' RETURN n"
    expect(validateSeeds([{ type: 2, value: q }])).toEqual([{ type: 2, value: q }])
  })

  it('refuses with BloodHound\'s messages and names the seed', () => {
    expect(refusal(undefined)).toEqual({ message: 'seeds are required', context: 'seeds' })
    expect(refusal([])).toEqual({ message: 'seeds are required', context: 'seeds' })
    expect(refusal([{ type: 0, value: 'x' }])).toEqual({ message: 'invalid seed type 0', context: 'seeds[0].type' })
    expect(refusal([{ type: 2, value: 'MATCH (n) RETURN n' }, { type: 1, value: 'x' }])).toEqual({ message: 'all seeds must be of the same type', context: 'seeds[1].type' })
    expect(refusal([{ type: 1, value: '  ' }]).context).toBe('seeds[0].value')
    expect(refusal([{ type: 1, value: 'x'.repeat(513) }]).message).toMatch(/at most 512/)
    expect(refusal([{ type: 2, value: 'MATCH (n) DETACH DELETE n' }]).message).toBe('cypher is invalid: updating clauses are not supported')
    expect(refusal([{ type: 2, value: 'MATCH (n) WITH n MERGE (m {x: 1}) RETURN m' }]).message).toBe('cypher is invalid: updating clauses are not supported')
    expect(refusal([{ type: 2, value: 'MATCH (n) WHERE n.name = $name RETURN n' }]).message).toBe('cypher is invalid: user-specified parameters are not supported')
    expect(refusal([{ type: 2, value: 'CALL db.labels()' }]).message).toBe('cypher is invalid: procedure invocation is not supported')
    expect(refusal([{ type: 2, value: '' }]).message).toBe('cypher is invalid: invalid input')
    expect(refusal([{ type: 2, value: 'MATCH (n' }]).message).toMatch(/^cypher is invalid: line 1:/)
  })
})
