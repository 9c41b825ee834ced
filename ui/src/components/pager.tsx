import { pageLabel } from '../lib/findings'

/** Previous / next for a skip+limit list; `label` names the list ("Previous page of members"). */
export function Pager({ skip, limit, length, count, label, onSkip }: { skip: number; limit: number; length: number; count: number; label: string; onSkip: (skip: number) => void }) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button class="secondary" disabled={skip === 0} onClick={() => onSkip(Math.max(0, skip - limit))} aria-label={`Previous page of ${label}`}>Previous</button>
      <span role="status">{pageLabel(skip, length, count)}</span>
      <button class="secondary" disabled={skip + length >= count} onClick={() => onSkip(skip + limit)} aria-label={`Next page of ${label}`}>Next</button>
    </nav>
  )
}
