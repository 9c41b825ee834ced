/**
 * Provider names and slugs. Pure.
 *
 * The slug is what the SSO URLs carry (`/api/v2/sso/<slug>/metadata`, `/login`, `/callback`), so it is
 * restricted to `[a-z0-9-]`: it needs no escaping anywhere and cannot smuggle path segments, dots or
 * query syntax into a URL. BloodHound's rule (lower case, spaces to `-`) is kept; accents are folded
 * (`Société` → `societe`) and every other character is dropped. Uniqueness of both name and slug is
 * enforced by the database (UNIQUE constraints), never by a read-then-write check.
 */
export const MAX_NAME_LENGTH = 100

export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '') // combining marks left by NFKD: é → e
    .toLowerCase()
    .replace(/\s/g, '-')
    .replace(/[^a-z0-9-]/g, '')
}

export type NameResult = { ok: true; name: string; slug: string } | { ok: false; message: string }

/** Trims and checks a provider name; returns it with its slug, or the reason it is refused. */
export function checkName(raw: string): NameResult {
  const name = raw.trim()
  if (name === '') return { ok: false, message: '"name" must not be blank' }
  const length = [...name].length
  if (length > MAX_NAME_LENGTH) return { ok: false, message: `"name" must be at most ${MAX_NAME_LENGTH} characters (it has ${length})` }
  if (/\p{Cc}/u.test(name)) return { ok: false, message: '"name" must not contain control characters (tabs, line breaks, …)' }
  const slug = slugify(name)
  if (!/[a-z0-9]/.test(slug))
    return { ok: false, message: `"name" must contain at least one letter or digit: its URL slug is made of a-z, 0-9 and "-" (got "${slug}")` }
  return { ok: true, name, slug }
}
