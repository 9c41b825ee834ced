/**
 * Is a Markdown text safe to hand to a renderer? Remediation texts of relationship findings are Markdown
 * that clients render (the connector and UIs show them as finding descriptions), and most Markdown
 * renderers pass raw HTML through. An extension author is trusted to administer the graph, not to run
 * script in every analyst's browser, so texts that carry active content are rejected at the door.
 *
 * SECURITY-CRITICAL. Reasoning, step by step:
 *
 * 1. We do not sanitise (rewrite) the text: the stored document must read back exactly as it was sent, and
 *    a rejected payload with a precise message is easier to reason about than a silently changed one.
 *    A renderer should still sanitise; this is the first of two fences, not the only one.
 * 2. The check runs on a NORMALISED copy, so that encodings a browser would undo cannot hide a match:
 *      - HTML character references are decoded (`&#106;`, `&#x6A;`, `&colon;`, with or without `;`),
 *        repeatedly (up to 3 rounds) because a text may be decoded more than once on its way to a page;
 *      - for the URL check, every C0 control character, including tab, CR and LF, is removed: the URL
 *        parser drops tab and newlines anywhere in a URL (`java\tscript:` is `javascript:`) and control
 *        characters at its start; for the tag checks they become spaces instead, because in HTML they
 *        separate a tag name from its attributes (`<div\nonclick=` is an event handler);
 *      - the text is lower-cased (tags, attributes and URL schemes are case-insensitive).
 * 3. On the normalised copy three things are rejected:
 *      - elements that run or load active content: script, iframe, frame, frameset, object, embed, applet,
 *        style, base, meta, link, form, template (an opening or closing tag, whitespace allowed after `<`);
 *      - event-handler attributes inside anything tag-like: `<x ... onerror=`, `<x/onload=` (on + letters
 *        followed by `=`), whether or not the tag is closed;
 *      - script URL schemes anywhere: `javascript:`, `vbscript:`, `livescript:`, and `data:` URLs with an
 *        HTML, SVG, XML or script media type. "Anywhere" (not only inside link syntax) is deliberate: link
 *        syntax has many forms (inline, reference definitions, autolinks, raw `href`), and a scheme in
 *        plain prose is rare in remediation text, so the false positive is cheap and the rule stays simple.
 * 4. Percent-encoding is NOT decoded: a scheme must be literal ASCII for a browser to honour it, so
 *    `javascript%3A…` is a harmless relative URL and `%6Aavascript:` is not a scheme at all.
 * 5. Known false positives (accepted, documented in docs/extensions.md): code spans or fenced blocks that
 *    quote such HTML, and prose that writes "javascript:" literally.
 */

export interface UnsafeFinding {
  /** what was found, written for the client */
  reason: string
}

const NAMED: Record<string, string> = {
  colon: ':',
  tab: '\t',
  newline: '\n',
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
  sol: '/',
  bsol: '\\',
  lpar: '(',
  rpar: ')',
  equals: '=',
  nbsp: ' ',
  period: '.',
  excl: '!',
}

function decodeReferences(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (m, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
      if (!Number.isFinite(cp) || cp < 0 || cp > 0x10ffff) return m
      return String.fromCodePoint(cp)
    }
    const v = NAMED[ref.toLowerCase()]
    return v ?? m
  })
}

/** The normalised copy the checks run on (exported for tests): `url` drops control characters, `tags` spaces them. */
export function normaliseForSafetyCheck(text: string, mode: 'url' | 'tags' = 'url'): string {
  let s = text
  for (let i = 0; i < 3; i++) {
    const next = decodeReferences(s)
    if (next === s) break
    s = next
  }
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]/g, mode === 'url' ? '' : ' ').toLowerCase()
}

const ACTIVE_ELEMENT = /<\s*\/?\s*(script|iframe|frameset|frame|object|embed|applet|style|base|meta|link|form|template)(?=[\s/>]|$)/
const EVENT_HANDLER = /<[a-z!?/][^>]*?[\s/"'`](on[a-z]+)\s*=/
const SCRIPT_SCHEME = /(javascript|vbscript|livescript):/
const DATA_ACTIVE = /data:\s*(text\/html|text\/xml|application\/xhtml|application\/xml|image\/svg|text\/javascript|application\/javascript|application\/x-javascript|text\/ecmascript|application\/ecmascript)/

/** Every reason the text is unsafe (empty when it is safe). */
export function markdownSafetyProblems(text: string): UnsafeFinding[] {
  const s = normaliseForSafetyCheck(text, 'url')
  const t = normaliseForSafetyCheck(text, 'tags')
  const out: UnsafeFinding[] = []
  const el = ACTIVE_ELEMENT.exec(t)
  if (el) out.push({ reason: `contains a <${el[1]}> element` })
  const ev = EVENT_HANDLER.exec(t)
  if (ev) out.push({ reason: `contains an event-handler attribute (${ev[1]}=)` })
  const sc = SCRIPT_SCHEME.exec(s)
  if (sc) out.push({ reason: `contains a ${sc[1]}: link` })
  const da = DATA_ACTIVE.exec(s)
  if (da) out.push({ reason: `contains a data: URL of type ${da[1]}` })
  return out
}
