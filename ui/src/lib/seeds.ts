import type { SelectorSeedJson } from '../../../src/client/assetgroups'

/**
 * A selector form's seeds (pure: unit-tested in test/unit/console-pages-logic.test.ts): object ids one per
 * line (blank lines and surrounding spaces dropped); a Cypher seed is the whole text, one query.
 */
export function parseSeeds(type: 1 | 2, text: string): SelectorSeedJson[] {
  if (type === 2) return text.trim() ? [{ type, value: text.trim() }] : []
  return text.split('\n').map((l) => l.trim()).filter(Boolean).map((value) => ({ type, value }))
}
