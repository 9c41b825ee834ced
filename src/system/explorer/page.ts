import { EXPLORER_CSS } from './styles'
import { EXPLORER_JS } from './script'

/**
 * The API explorer page: a static HTML shell plus one script and one stylesheet, all served by the worker
 * (no CDN, so it works with no internet). Everything the page shows is built by the script from
 * /api/v2/spec with DOM APIs and `textContent` (never `innerHTML`), so nothing in the spec or in a response
 * can inject markup.
 *
 * Content-Security-Policy, reasoning: every source is `'self'` — scripts and styles only from the
 * worker's own files (no inline script or style, no eval), requests only to this origin (the API itself),
 * no plugins, no <base> rewriting, no form posts, and the page may not be framed (clickjacking on a page
 * that holds a token key in memory).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** FNV-1a, 32 bit: a short content hash for ETags and cache-busting asset URLs (not for security). */
export function contentHash(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}

export const ASSETS = {
  'explorer.js': { body: EXPLORER_JS, type: 'text/javascript; charset=utf-8', hash: contentHash(EXPLORER_JS) },
  'explorer.css': { body: EXPLORER_CSS, type: 'text/css; charset=utf-8', hash: contentHash(EXPLORER_CSS) },
} as const

export type AssetName = keyof typeof ASSETS

export function explorerHtml(): string {
  const js = ASSETS['explorer.js']
  const css = ASSETS['explorer.css']
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>EdgeHound API explorer</title>
<link rel="stylesheet" href="/api/v2/docs/explorer.css?v=${css.hash}">
<script src="/api/v2/docs/explorer.js?v=${js.hash}" defer></script>
</head>
<body>
<header class="top">
  <div class="brand"><h1>EdgeHound API</h1><span id="api-version" class="muted"></span></div>
  <p class="muted">Interactive reference built from <a href="/api/v2/spec">/api/v2/spec</a>. Requests go to this server, signed in your browser.</p>
</header>
<section id="auth" class="panel" aria-label="Credentials"></section>
<div class="toolbar">
  <label for="filter" class="visually-hidden">Filter operations</label>
  <input id="filter" type="search" placeholder="Filter by path, summary, tag or permission" autocomplete="off">
  <span id="op-count" class="muted"></span>
</div>
<main id="operations" aria-busy="true"><p class="muted">Loading the API description…</p></main>
<noscript><p>This explorer needs JavaScript. The raw OpenAPI document is at <a href="/api/v2/spec">/api/v2/spec</a>.</p></noscript>
</body>
</html>
`
}
