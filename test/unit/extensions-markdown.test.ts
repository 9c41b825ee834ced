import { describe, expect, it } from 'vitest'
import { markdownSafetyProblems, normaliseForSafetyCheck } from '../../src/extensions/markdown-safety'

const reasons = (t: string) => markdownSafetyProblems(t).map((p) => p.reason)

describe('markdown safety: safe texts pass', () => {
  it.each([
    'Plain text.',
    '**Bold**, *italic*, `code`, and a [link](https://docs.github.com/en/organizations).',
    '1. Open **Settings**\n2. Remove the owner\n\n```yaml\nenvironment: production\n```',
    'Inline <b>bold</b> and <em>emphasis</em> and <br/> are harmless HTML.',
    'A table:\n\n| a | b |\n|---|---|\n| 1 | 2 |',
    'Mentions of online=yes outside tags, and scripting in general, are fine.',
    'An image: ![diagram](https://example.com/d.png) and <img src="https://example.com/x.png" alt="x">',
    'A relative link [here](javascript%3Aalert) is not a script scheme.',
    '<a href="https://example.com" title="one">ok</a>',
  ])('%s', (t) => {
    expect(markdownSafetyProblems(t)).toEqual([])
  })
})

describe('markdown safety: active content is rejected', () => {
  it.each([
    ['<script>alert(1)</script>', 'contains a <script> element'],
    ['<SCRIPT src=//evil.example></SCRIPT>', 'contains a <script> element'],
    ['< script>alert(1)</script>', 'contains a <script> element'],
    ['text </script> text', 'contains a <script> element'],
    ['<iframe src="https://evil.example"></iframe>', 'contains a <iframe> element'],
    ['<object data="x"></object>', 'contains a <object> element'],
    ['<embed src="x">', 'contains a <embed> element'],
    ['<style>body{display:none}</style>', 'contains a <style> element'],
    ['<meta http-equiv="refresh" content="0;url=https://evil.example">', 'contains a <meta> element'],
    ['<base href="https://evil.example/">', 'contains a <base> element'],
    ['<form action="https://evil.example"><input></form>', 'contains a <form> element'],
  ])('%s', (t, reason) => {
    expect(reasons(t)).toContain(reason)
  })

  it.each([
    ['<img src=x onerror=alert(1)>', 'onerror'],
    ['<img src="x" ONERROR="alert(1)">', 'onerror'],
    ['<svg/onload=alert(1)>', 'onload'],
    ['<a href="#" onclick = "steal()">x</a>', 'onclick'],
    ['<div\nonmouseover="x()">hover</div>', 'onmouseover'],
    ['<img src=x onerror=alert(1)', 'onerror'], // unclosed tag
    ['<details open ontoggle=alert(1)>', 'ontoggle'],
  ])('event handler %s', (t, attr) => {
    expect(reasons(t)).toContain(`contains an event-handler attribute (${attr}=)`)
  })

  it.each([
    '[click](javascript:alert(1))',
    '[click](JavaScript:alert(1))',
    '[click]( javascript:alert(1) )',
    '<javascript:alert(1)>',
    '[ref]: javascript:alert(1)\n\n[click][ref]',
    '<a href="javascript:alert(1)">x</a>',
    '[click](java\tscript:alert(1))',
    '[click](java\nscript:alert(1))',
    '[click](&#106;avascript:alert(1))',
    '[click](&#x6A;avascript&#x3A;alert(1))',
    '[click](&#0000106&#0000097vascript:alert(1))',
    '[click](javascript&colon;alert(1))',
    '[click](&amp;#106;avascript:alert(1))', // decoded twice on the way
    '[click](\u0001javascript:alert(1))',
  ])('javascript link %s', (t) => {
    expect(reasons(t)).toContain('contains a javascript: link')
  })

  it('vbscript and data: HTML links', () => {
    expect(reasons('[x](vbscript:msgbox(1))')).toContain('contains a vbscript: link')
    expect(reasons('[x](data:text/html;base64,PHNjcmlwdD4=)')).toContain('contains a data: URL of type text/html')
    expect(reasons('<a href="data:image/svg+xml,<svg onload=alert(1)>">x</a>').length).toBeGreaterThan(0)
  })

  it('reports every problem of one text', () => {
    expect(reasons('<script>x</script> <img src=x onerror=y> [a](javascript:z)')).toEqual([
      'contains a <script> element',
      'contains an event-handler attribute (onerror=)',
      'contains a javascript: link',
    ])
  })

  it('normalisation decodes references, drops control characters and lower-cases', () => {
    expect(normaliseForSafetyCheck('Ja&#x56;a\tScRiPt&colon;')).toBe('javascript:')
    expect(normaliseForSafetyCheck('<div\nonclick=', 'tags')).toBe('<div onclick=')
    expect(normaliseForSafetyCheck('&lt;b&gt;')).toBe('<b>')
    expect(normaliseForSafetyCheck('&unknown; &#xZZ;')).toBe('&unknown; &#xzz;')
  })
})
