/**
 * src/oidc/verify.ts: each ID-token rule refused on its own, with a token signed by a test key generated here
 * (SubtleCrypto), so that a refusal can only come from the rule under test.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { exportJWK, SignJWT, type JSONWebKeySet, type JWK } from 'jose'
import { OidcTokenError, verifyIdToken } from '../../src/oidc/verify'
import { boundRef, loginCookie, pkceChallenge, randomToken } from '../../src/oidc/binding'

const ISSUER = 'https://idp.test.example'
const CLIENT = 'edgehound-client'
const NONCE = 'n-0123456789abcdef'
const NOW = new Date('2026-11-29T05:00:00Z')
const now = Math.floor(NOW.getTime() / 1000)

let keyA: CryptoKeyPair
let keyB: CryptoKeyPair
let jwks: JSONWebKeySet
let publicA: JWK
beforeAll(async () => {
  const rsa = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
  keyA = (await crypto.subtle.generateKey(rsa, true, ['sign', 'verify'])) as CryptoKeyPair
  keyB = (await crypto.subtle.generateKey(rsa, true, ['sign', 'verify'])) as CryptoKeyPair
  publicA = { ...(await exportJWK(keyA.publicKey)), kid: 'a', alg: 'RS256', use: 'sig' }
  jwks = { keys: [publicA] }
})

type Claims = Record<string, unknown>
async function token(o: { claims?: Claims; omit?: string[]; kid?: string; key?: CryptoKey; alg?: string } = {}): Promise<string> {
  const claims: Claims = { iss: ISSUER, aud: CLIENT, sub: 'user-1', nonce: NONCE, iat: now - 5, exp: now + 300, email: 'dana@corp.example', ...o.claims }
  for (const k of o.omit ?? []) delete claims[k]
  return new SignJWT(claims).setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? 'a' }).sign(o.key ?? keyA.privateKey)
}
const verify = (t: string, e: Partial<Parameters<typeof verifyIdToken>[1]> = {}) =>
  verifyIdToken(t, { issuer: ISSUER, clientId: CLIENT, nonce: NONCE, jwks, now: NOW, ...e })
async function refused(t: string | Promise<string>, reason: string, e: Partial<Parameters<typeof verifyIdToken>[1]> = {}) {
  const err = await verify(await t, e).then(
    () => null,
    (x: unknown) => x,
  )
  expect(err).toBeInstanceOf(OidcTokenError)
  expect((err as OidcTokenError).reason).toBe(reason)
}
const b64url = (s: string) => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

describe('verifyIdToken', () => {
  it('accepts a well-formed token and returns its claims', async () => {
    const v = await verify(await token({ claims: { roles: ['bh-administrator'], given_name: 'Dana' } }))
    expect(v).toMatchObject({ sub: 'user-1', email: 'dana@corp.example', givenName: 'Dana', roles: ['bh-administrator'] })
  })

  it('wrong audience (aud) and a multi-audience token whose azp is another client', async () => {
    await refused(token({ claims: { aud: 'another-client' } }), 'aud')
    await refused(token({ claims: { aud: [CLIENT, 'another-client'] } }), 'azp')
    await refused(token({ claims: { aud: [CLIENT, 'another-client'], azp: 'another-client' } }), 'azp')
    await expect(verify(await token({ claims: { aud: [CLIENT, 'x'], azp: CLIENT } }))).resolves.toMatchObject({ sub: 'user-1' })
  })

  it('wrong issuer', async () => {
    await refused(token({ claims: { iss: 'https://evil.test.example' } }), 'iss')
    await refused(token({ claims: { iss: `${ISSUER}/` } }), 'iss')
  })

  it('expired beyond the skew; within the skew accepted', async () => {
    await refused(token({ claims: { exp: now - 61 } }), 'expired')
    await expect(verify(await token({ claims: { exp: now - 30 } }))).resolves.toBeTruthy()
  })

  it('iat in the future or too old; exp/iat missing', async () => {
    await refused(token({ claims: { iat: now + 120 } }), 'iat')
    await refused(token({ claims: { iat: now - 3600, exp: now + 300 } }), 'iat')
    await refused(token({ omit: ['exp'] }), 'claims')
    await refused(token({ omit: ['iat'] }), 'claims')
  })

  it('wrong or missing nonce', async () => {
    await refused(token({ claims: { nonce: 'another' } }), 'nonce')
    await refused(token({ omit: ['nonce'] }), 'claims')
  })

  it('bad signature: signed by another key under the same kid, or a tampered payload', async () => {
    await refused(token({ key: keyB.privateKey }), 'bad_signature')
    const [h, , s] = (await token()).split('.')
    const forged = b64url(JSON.stringify({ iss: ISSUER, aud: CLIENT, sub: 'admin', nonce: NONCE, iat: now, exp: now + 300 }))
    await refused(`${h}.${forged}.${s}`, 'bad_signature')
  })

  it('unknown kid', async () => {
    await refused(token({ kid: 'rotated-away' }), 'unknown_kid')
  })

  it('alg none and HMAC (alg confusion with the public key as secret) are refused before any key is used', async () => {
    const body = b64url(JSON.stringify({ iss: ISSUER, aud: CLIENT, sub: 'x', nonce: NONCE, iat: now, exp: now + 300 }))
    await refused(`${b64url(JSON.stringify({ alg: 'none', kid: 'a' }))}.${body}.`, 'alg')
    const secret = new TextEncoder().encode(JSON.stringify(publicA))
    const hs = await new SignJWT({ iss: ISSUER, aud: CLIENT, sub: 'x', nonce: NONCE, iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'HS256', kid: 'a' })
      .sign(secret)
    await refused(hs, 'alg')
  })

  it('a key embedded in the token header (jwk) is ignored: only the JWKS counts', async () => {
    const embedded = await exportJWK(keyB.publicKey)
    const t = await new SignJWT({ iss: ISSUER, aud: CLIENT, sub: 'x', nonce: NONCE, iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'RS256', kid: 'a', jwk: embedded })
      .sign(keyB.privateKey)
    await refused(t, 'bad_signature')
  })

  it('garbage is malformed, not an exception', async () => {
    await refused('not-a-jwt', 'malformed')
    await refused('a.b.c', 'malformed')
  })
})

describe('verifyIdToken: key choice and claims', () => {
  it('a JWKS key under the right kid but for another algorithm is not used (unknown_kid)', async () => {
    const ec = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair
    const ecJwk = { ...(await exportJWK(ec.publicKey)), kid: 'a', alg: 'ES256', use: 'sig' }
    await refused(token(), 'unknown_kid', { jwks: { keys: [ecJwk] } })
  })
  it('two keys usable for the alg and no kid in the token: refused, not the first one tried', async () => {
    const publicB = { ...(await exportJWK(keyB.publicKey)), alg: 'RS256', use: 'sig' }
    const noKid = await new SignJWT({ iss: ISSUER, aud: CLIENT, sub: 'x', nonce: NONCE, iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(keyA.privateKey)
    await refused(noKid, 'unknown_kid', { jwks: { keys: [{ ...publicA, kid: undefined }, publicB] } })
  })
  it('no sub, no nonce, no aud: each a missing-claim refusal', async () => {
    await refused(token({ omit: ['sub'] }), 'claims')
    await refused(token({ omit: ['aud'] }), 'claims')
    await refused(token({ omit: ['iss'] }), 'claims')
  })
  it('email_verified and the role claims are read as given', async () => {
    const v = await verify(await token({ claims: { email_verified: false, groups: ['g1', 7], roles: 'r1' } }))
    expect(v.emailVerified).toBe(false)
    expect(v.roles).toEqual(['r1', 'g1'])
  })
})

describe('browser binding (src/oidc/binding.ts)', () => {
  const KEY = 'a-test-signing-key-of-some-length-0123456789'
  it('PKCE S256 matches RFC 7636 appendix B', async () => {
    expect(await pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
  })
  it('the cookie names its ref only under the server key; a changed ref, MAC or key is no binding', async () => {
    const ref = randomToken()
    const set = await loginCookie(KEY, ref, '/api/v2/sso/x/callback')
    const value = set.split(';')[0]
    expect(await boundRef(KEY, `other=1; ${value}`)).toBe(ref)
    expect(await boundRef('another-key-of-the-same-kind-0123456789', value)).toBeNull()
    const [name, v] = value.split('=')
    const [r, m] = v.split('.')
    expect(await boundRef(KEY, `${name}=${randomToken()}.${m}`)).toBeNull()
    expect(await boundRef(KEY, `${name}=${r}.${m.slice(0, -1)}${m.endsWith('A') ? 'B' : 'A'}`)).toBeNull()
    expect(await boundRef(KEY, `${name}=${r}`)).toBeNull()
    expect(await boundRef(KEY, null)).toBeNull()
  })
})
