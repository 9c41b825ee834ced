/**
 * The answer's table view ("Graph as table") is shown a page at a time: rendering and laying out thousands of rows
 * is one long task of the page's thread (0.3–1.6 s for 1,000 rows of a 5,000-node answer, measured in the browser
 * test), during which the page takes no input. Nodes and relationships are paged separately. Pure; unit-tested in
 * test/unit/console-explore.test.ts.
 */

/** Rows per page of the table view, for nodes and for relationships. */
export const TABLE_PAGE_ROWS = 100

export interface TablePage {
  /** the page shown (0-based), clamped to the pages there are */
  page: number
  pages: number
  /** rows [start, end) of the list are shown */
  start: number
  end: number
  hasPrevious: boolean
  hasNext: boolean
  /** "1–100 of 5,000" (en dash, thousands separated) */
  range: string
}

/** 5000 → "5,000" (as toLocaleString('en'), whose first call loads the locale data: tens of ms on a busy page). */
export const thousands = (x: number) => String(Math.trunc(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')

export function tablePage(total: number, page: number, size = TABLE_PAGE_ROWS): TablePage {
  const pages = Math.max(1, Math.ceil(total / size))
  const p = Math.min(Math.max(0, Math.floor(page) || 0), pages - 1)
  const start = Math.min(p * size, total)
  const end = Math.min(start + size, total)
  const n = thousands
  return { page: p, pages, start, end, hasPrevious: p > 0, hasNext: p < pages - 1, range: total === 0 ? '0 of 0' : `${n(start + 1)}–${n(end)} of ${n(total)}` }
}
