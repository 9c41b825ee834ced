/**
 * The SSO flow URLs a SAML provider hands out (sp_issuer_uri, sp_sso_uri, sp_acs_uri; sp_metadata_uri is in
 * saml.routes.ts), and BloodHound's public list of sign-on endpoints. HTTP only: the AuthnRequest and the
 * bindings are in authn-request.ts, SQL in sso.store.ts. See docs/saml.md, "SSO endpoints".
 *
 *   GET  /api/v2/sso/:slug            SP metadata (the issuer URL resolves to the same document as /metadata)
 *   GET  /api/v2/sso/:slug/login      SP-initiated login: 302 to the IdP (HTTP-Redirect) or a POST form page
 *   POST /api/v2/sso/:slug/callback   assertion consumer service: 501 until assertions are verified
 *   GET  /api/v2/saml/sso             every provider's name and login URL (public, as in BloodHound)
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { randomBytes, toBase64 } from '../auth/encoding'
import {
  authnRequestXml,
  checkRelayState,
  chooseSsoTarget,
  cspOrigin,
  MAX_RELAY_STATE,
  newRequestId,
  normaliseEndpoint,
  postBindingPage,
  redirectBindingLocation,
} from './authn-request'
import { idpSsoServices, MetadataError, type IdpSsoServices } from './metadata'
import { spMetadataXml, spUrls } from './sp'
import { getLoginTarget, listSignOnProviders, saveSsoServices, slugExists } from './sso.store'

export const ACS_NOT_SUPPORTED = 'SAML assertion consumption is not supported by this server yet; use API tokens or password login'
const ACS_MAX_BYTES = 1024 * 1024
const TAGS = ['Auth', 'Community', 'Enterprise']

function baseUrl(c: Context<AppEnv>): string {
  return c.var.config.PUBLIC_BASE_URL ?? new URL(c.req.url).origin
}

/** Slugs are `[a-z0-9-]+` (names.ts): anything else cannot name a provider, so it is simply not found. */
const isSlug = (s: string) => /^[a-z0-9-]{1,200}$/.test(s)
const notFound = () => new ApiError(404, 'resource not found: no SSO provider has this slug', 'slug')
const slugParams = z.object({ slug: z.string().describe('the provider slug (lower case, `[a-z0-9-]`)') })

async function requireSlug(c: Context<AppEnv>, slug: string): Promise<void> {
  if (!isSlug(slug) || !(await slugExists(c.env.DB, slug))) throw notFound()
}

const LoginQuery = z.object({
  RelayState: z
    .string()
    .superRefine((v, ctx) => {
      const r = checkRelayState(v)
      if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message })
    })
    .optional()
    .describe(`where to go after login: a path on this site starting with "/" (not "//"), printable ASCII, at most ${MAX_RELAY_STATE} characters; passed to the IdP as RelayState`),
})

const spMetadataResponse = {
  200: {
    description: 'SP metadata: entity id, ACS endpoint (HTTP-POST binding), NameID formats',
    contentType: 'application/samlmetadata+xml',
    schema: z.string(),
  },
}

export const ssoFlowRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso/:slug',
      operationId: 'GetSpMetadataAtIssuer',
      summary: "This service's SAML SP metadata at the provider's issuer URL (sp_issuer_uri); same document as /metadata",
      tags: TAGS,
      auth: 'public',
      params: slugParams,
      responses: spMetadataResponse,
    },
    async (c, { params }) => {
      await requireSlug(c, params.slug)
      return c.body(spMetadataXml(spUrls(baseUrl(c), params.slug), c.var.now()), 200, { 'Content-Type': 'application/samlmetadata+xml' })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso/:slug/login',
      operationId: 'StartSamlLogin',
      summary: 'SP-initiated SAML login: send the browser to the IdP with an AuthnRequest',
      description:
        'Builds a SAML 2.0 AuthnRequest (Destination = the IdP SSO endpoint, AssertionConsumerServiceURL = sp_acs_uri, ' +
        'ProtocolBinding HTTP-POST, Issuer = sp_issuer_uri, NameIDPolicy unspecified). When the IdP metadata lists the ' +
        'HTTP-Redirect binding: 302 to that endpoint with SAMLRequest (DEFLATE, base64) and RelayState in the query. ' +
        'Otherwise 200 with an HTML page that POSTs SAMLRequest (base64) and RelayState to the HTTP-POST endpoint.',
      tags: TAGS,
      auth: 'public',
      params: slugParams,
      query: LoginQuery,
      responses: {
        200: { description: 'HTTP-POST binding: an auto-submitting form to the IdP (strict CSP)', contentType: 'text/html', schema: z.string() },
        302: { description: 'HTTP-Redirect binding: to the IdP SSO endpoint', headers: { Location: 'IdP SSO URL with SAMLRequest (and RelayState)' } },
        409: { description: "the provider's IdP metadata has expired (validUntil passed), or its SSO URL cannot be used" },
      },
    },
    async (c, { params, query }) => {
      const t = isSlug(params.slug) ? await getLoginTarget(c.env.DB, params.slug) : null
      if (!t) throw notFound()
      const now = c.var.now()
      // Metadata past its validUntil must not be relied on (SAML metadata §2.3.2 / saml2int): no login with it.
      if (t.metadata_valid_until !== null && Date.parse(t.metadata_valid_until) <= now.getTime())
        throw new ApiError(
          409,
          `the IdP metadata of this SSO provider expired at ${t.metadata_valid_until}; an administrator must upload current metadata`,
          'saml',
        )

      let services: IdpSsoServices | null = t.services
      if (!services && t.metadata_xml !== null) {
        try {
          services = idpSsoServices(t.metadata_xml)
        } catch (e) {
          if (!(e instanceof MetadataError)) throw e
          services = null // accepted once, unreadable now (stricter parser): fall back to the stored endpoint
        }
        if (services) await saveSsoServices(c.env.DB, t.saml_provider_id, t.updated_at, services)
      }
      const target = chooseSsoTarget(services, { binding: t.sso_binding, url: t.single_sign_on_uri })
      const endpoint = normaliseEndpoint(target.url)
      const urls = spUrls(baseUrl(c), t.slug)
      const xml = authnRequestXml({ id: newRequestId(), issueInstant: now, destination: endpoint, acsUrl: urls.sp_acs_uri, issuer: urls.sp_issuer_uri })
      const relayState = query.RelayState ?? null

      if (target.binding === 'HTTP-Redirect') return c.body(null, 302, { Location: redirectBindingLocation(endpoint, xml, relayState) })

      if (!cspOrigin(endpoint))
        throw new ApiError(409, "the IdP SSO URL of this provider has a host name that cannot be used in a login page's security policy", 'saml')
      const page = postBindingPage({ endpoint, xml, relayState, nonce: toBase64(randomBytes(16)), providerName: t.name })
      return c.body(page.html, 200, {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': page.csp,
        'X-Frame-Options': 'DENY',
      })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/sso/:slug/callback',
      operationId: 'SamlAssertionConsumerService',
      summary: 'SAML assertion consumer service (sp_acs_uri): not supported yet, answers 501',
      description:
        'The IdP posts the SAMLResponse here (HTTP-POST binding). Verifying it (XML signature with exclusive ' +
        'canonicalisation, conditions, audience, InResponseTo) is not implemented, so a known provider always gets ' +
        `501 "${ACS_NOT_SUPPORTED}"; an unknown slug gets 404.`,
      tags: TAGS,
      auth: 'public',
      params: slugParams,
      // The HTTP-POST binding's form is a plain HTML form, so browsers send it url-encoded (SAML Bindings §3.5.4);
      // no IdP uses multipart, and a JSON body is not a SAML binding: both are 415.
      body: {
        kind: 'raw',
        contentTypes: ['application/x-www-form-urlencoded'],
        maxBytes: ACS_MAX_BYTES,
        description: "the IdP's form (HTTP-POST binding): SAMLResponse (base64) and RelayState",
      },
      responses: { 501: { description: `always, for a known provider: \`${ACS_NOT_SUPPORTED}\`` } },
    },
    async (c, { params }) => {
      await requireSlug(c, params.slug)
      throw new ApiError(501, ACS_NOT_SUPPORTED, 'saml')
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saml/sso',
      operationId: 'ListSamlSignOnEndpoints',
      summary: 'Sign-on endpoints of every SAML provider (for a login page; no authentication)',
      tags: TAGS,
      auth: 'public',
      responses: {
        200: {
          description: 'name and login URL (sp_sso_uri) of each provider, oldest first; an empty array when there is none',
          schema: z.object({ data: z.object({ endpoints: z.array(z.object({ name: z.string(), initiation_url: z.string() })) }) }),
        },
      },
    },
    async (c) => {
      const base = baseUrl(c)
      const rows = await listSignOnProviders(c.env.DB)
      return c.json({ data: { endpoints: rows.map((r) => ({ name: r.name, initiation_url: spUrls(base, r.slug).sp_sso_uri })) } })
    },
  ),
]
