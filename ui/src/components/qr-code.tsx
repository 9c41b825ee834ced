import { qrPath } from '../lib/mfa'

/** A QR code drawn as SVG (no canvas, no inline style: the console's CSP holds); dark on light with a quiet zone. */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, d } = qrPath(text)
  const side = size + 8
  return (
    <svg class="qr" role="img" aria-label={label} viewBox={`-4 -4 ${side} ${side}`} width={side * 4} height={side * 4} shape-rendering="crispEdges">
      <rect x={-4} y={-4} width={side} height={side} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  )
}
