/**
 * SP-initiated SAML 2.0 login: the AuthnRequest this service sends and the two ways of sending it
 * (SAML 2.0 Bindings §3.4 HTTP-Redirect, §3.5 HTTP-POST). Pure: ids, nonces and the clock come in as
 * parameters (only `newRequestId` draws randomness by default), so every output is reproducible in tests.
 *
 * Security reasoning, next to the code it governs:
 *  - Every value placed in XML or HTML is escaped (the IdP URL comes from uploaded metadata and may hold
 *    `&`, quotes or `<`; RelayState comes from the query string).
 *  - RelayState is restricted to a same-site relative path (`checkRelayState`), because whatever is put
 *    there comes back from the IdP to the ACS, which will redirect the browser to it after login: anything
 *    else would be an open redirect.
 *  - The POST page runs no script but one carrying a fresh nonce, may submit forms only to the IdP's origin,
 *    loads nothing and cannot be framed (`postBindingPage`).
 *  - The request is unsigned: this service has no SP key (its metadata says AuthnRequestsSigned="false").
 *    An AuthnRequest grants nothing by itself; what matters is the signed assertion that comes back.
 */
import { deflateSync } from 'fflate'
import { toBase64, utf8 } from '../auth/encoding'
import { BINDING_POST, SAML2_PROTOCOL, type IdpSsoServices } from './metadata'
import { xmlEscape } from './sp'

export const SAML2_ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion'
/**
 * NameIDPolicy Format asked for. "unspecified" lets the IdP send the format its application is configured
 * for: ADFS and Okta refuse a request naming a format the application does not issue (InvalidNameIDPolicy),
 * and the user is matched by attributes (email) anyway. AllowCreate="true" lets the IdP create a persistent
 * identifier for a first login.
 */
export const NAMEID_UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'
/** Longest RelayState accepted (the binding spec asks IdPs to take 80 bytes; those in use take far more). */
export const MAX_RELAY_STATE = 512

export interface AuthnRequestInput {
  /** xs:ID: must start with a letter or `_` (see `newRequestId`) */
  id: string
  issueInstant: Date
  /** the IdP endpoint the request is sent to */
  destination: string
  /** this service's ACS (sp_acs_uri) */
  acsUrl: string
  /** this service's entity id (sp_issuer_uri) */
  issuer: string
}

/** A request id: `_` then 160 random bits in hex (SAML core §1.3.4 asks for at least 128 bits). */
export function newRequestId(random: Uint8Array = crypto.getRandomValues(new Uint8Array(20))): string {
  return `_${[...random].map((b) => b.toString(16).padStart(2, '0')).join('')}`
}

/** SAML timestamps are xs:dateTime in UTC; RFC 3339 with `Z` is one. */
export function samlInstant(d: Date): string {
  return d.toISOString()
}

/** The AuthnRequest document (no XML declaration: the bindings carry bare UTF-8 XML). */
export function authnRequestXml(r: AuthnRequestInput): string {
  if (!/^[A-Za-z_][A-Za-z0-9._-]*$/.test(r.id)) throw new Error('AuthnRequest ID must be an xs:ID (NCName)')
  return (
    `<samlp:AuthnRequest xmlns:samlp="${SAML2_PROTOCOL}" xmlns:saml="${SAML2_ASSERTION}"` +
    ` ID="${xmlEscape(r.id)}" Version="2.0" IssueInstant="${samlInstant(r.issueInstant)}"` +
    ` Destination="${xmlEscape(r.destination)}" AssertionConsumerServiceURL="${xmlEscape(r.acsUrl)}"` +
    ` ProtocolBinding="${BINDING_POST}">` +
    `<saml:Issuer>${xmlEscape(r.issuer)}</saml:Issuer>` +
    `<samlp:NameIDPolicy Format="${NAMEID_UNSPECIFIED}" AllowCreate="true"/>` +
    `</samlp:AuthnRequest>`
  )
}

// ---- which endpoint, which binding -----------------------------------------------------------------

export type SsoBinding = 'HTTP-Redirect' | 'HTTP-POST'
export interface SsoTarget {
  binding: SsoBinding
  url: string
}

/**
 * HTTP-Redirect when the metadata lists it (a plain 302, no page of ours in between; BloodHound's crewjam
 * setup prefers it too), at the Redirect endpoint's own Location, which may differ from the POST one.
 * Otherwise HTTP-POST. `services` null (the stored metadata could not be read again) falls back to what
 * was chosen at upload.
 */
export function chooseSsoTarget(services: IdpSsoServices | null, stored: SsoTarget): SsoTarget {
  if (services?.redirect) return { binding: 'HTTP-Redirect', url: services.redirect }
  if (services?.post) return { binding: 'HTTP-POST', url: services.post }
  return stored
}

/**
 * The endpoint as sent: parsed and re-serialised by the URL parser (non-ASCII and spaces percent-encoded,
 * so the result is a valid Location header value), fragment dropped (it never reaches a server).
 * The same string is the request's Destination, so the two cannot disagree.
 */
export function normaliseEndpoint(url: string): string {
  const u = new URL(url)
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('IdP SSO endpoint must be an http(s) URL')
  u.hash = ''
  return u.href
}

// ---- RelayState ----------------------------------------------------------------------------------

export type RelayStateCheck = { ok: true; value: string } | { ok: false; message: string }

/**
 * RelayState must be a relative path on this site: it comes back from the IdP and will be where the
 * browser is sent after login, so anything that a browser could resolve to another origin is refused:
 *  - it must start with `/`, and its second character must not be `/` or `\`: `//evil.example` and
 *    `/\evil.example` are protocol-relative URLs to browsers (they treat `\` as `/`);
 *  - only printable ASCII (0x21–0x7E) and no `\` anywhere: browsers silently drop tabs and line breaks
 *    from URLs (`/\t/evil.example` becomes `//evil.example`), CR/LF would also split headers, and
 *    non-ASCII has to be percent-encoded anyway;
 *  - at most 512 characters.
 */
export function checkRelayState(value: string): RelayStateCheck {
  if (value.length > MAX_RELAY_STATE)
    return { ok: false, message: `RelayState must be at most ${MAX_RELAY_STATE} characters (it has ${value.length})` }
  if (!value.startsWith('/')) return { ok: false, message: 'RelayState must be a relative path starting with "/"' }
  if (value[1] === '/' || value[1] === '\\')
    return { ok: false, message: 'RelayState must be a relative path on this site: "//" or "/\\" would lead to another site' }
  if (!/^[\x21-\x7e]*$/.test(value) || value.includes('\\'))
    return { ok: false, message: 'RelayState may contain only printable ASCII characters other than "\\" (percent-encode anything else)' }
  return { ok: true, value }
}

// ---- HTTP-Redirect binding (§3.4) ----------------------------------------------------------------

/** DEFLATE (raw, RFC 1951), then base64: the SAMLRequest value of the Redirect binding, before URL-encoding. */
export function deflateAndEncode(xml: string): string {
  return toBase64(deflateSync(utf8.encode(xml), { level: 9 }))
}

/**
 * The Location to redirect the browser to: the endpoint with `SAMLRequest` (and `RelayState`) appended to
 * whatever query it already has (some IdPs carry a tenant in it). Values are URL-encoded with
 * encodeURIComponent, so `+`, `/` and `=` of the base64 survive. `endpoint` must be normalised.
 */
export function redirectBindingLocation(endpoint: string, xml: string, relayState: string | null): string {
  let q = `SAMLRequest=${encodeURIComponent(deflateAndEncode(xml))}`
  if (relayState !== null) q += `&RelayState=${encodeURIComponent(relayState)}`
  const sep = !endpoint.includes('?') ? '?' : endpoint.endsWith('?') || endpoint.endsWith('&') ? '' : '&'
  return endpoint + sep + q
}

// ---- HTTP-POST binding (§3.5) --------------------------------------------------------------------

export function htmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** A CSP source expression for the endpoint's origin; null when the origin holds anything a CSP could misread. */
export function cspOrigin(endpoint: string): string | null {
  const origin = new URL(endpoint).origin
  // Hostnames may legally contain `;` or `,`, which would end the directive or the policy.
  return /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(origin) ? origin : null
}

export interface PostBindingPage {
  html: string
  /** the Content-Security-Policy the page must be served with */
  csp: string
}

/**
 * An HTML page holding a form that POSTs SAMLRequest (base64 of the XML, not deflated) and RelayState to the
 * IdP, submitted by a nonce'd one-line script, with a button for browsers without script.
 * CSP: nothing may load (`default-src 'none'`), the only script is the nonce'd one, forms may go only to the
 * IdP's origin, no `<base>`, no framing (clickjacking). `nonce` must be fresh per response (base64 of ≥128 bits).
 * Note: `form-action` also governs redirects that follow the submission in some browsers; an IdP that
 * answers the POST with a redirect to another origin would need that origin added.
 */
export function postBindingPage(p: { endpoint: string; xml: string; relayState: string | null; nonce: string; providerName: string }): PostBindingPage {
  const origin = cspOrigin(p.endpoint)
  if (!origin) throw new Error('IdP SSO endpoint origin cannot be written into a Content-Security-Policy')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(p.nonce)) throw new Error('nonce must be base64')
  const samlRequest = toBase64(utf8.encode(p.xml))
  const relay = p.relayState === null ? '' : `\n<input type="hidden" name="RelayState" value="${htmlEscape(p.relayState)}">`
  const name = htmlEscape(p.providerName)
  const html =
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
    `<title>Signing in with ${name}</title>\n</head>\n<body>\n` +
    `<form method="post" action="${htmlEscape(p.endpoint)}">\n` +
    `<input type="hidden" name="SAMLRequest" value="${htmlEscape(samlRequest)}">${relay}\n` +
    `<p>Continue to ${name} to sign in.</p>\n<button type="submit">Continue</button>\n</form>\n` +
    `<script nonce="${p.nonce}">document.forms[0].submit()</script>\n</body>\n</html>\n`
  const csp = `default-src 'none'; script-src 'nonce-${p.nonce}'; form-action ${origin}; base-uri 'none'; frame-ancestors 'none'`
  return { html, csp }
}
