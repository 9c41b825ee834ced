// A kind's glyph as inline SVG on its colour (lists, panels, the table view): the same shapes the graph draws.
import { GLYPHS, styleOf, type KindStyle } from './kind-style'

export function KindIcon({ kinds, table, size = 18 }: { kinds: string | readonly string[]; table?: Map<string, KindStyle>; size?: number }) {
  const s = styleOf(kinds, table)
  return (
    <svg class="kind-icon" width={size} height={size} viewBox="-4 -4 32 32" aria-hidden="true" focusable="false">
      <circle cx="12" cy="12" r="15.5" fill={s.colour} />
      <path d={GLYPHS[s.glyph]} fill="#fff" fill-rule="evenodd" />
    </svg>
  )
}
