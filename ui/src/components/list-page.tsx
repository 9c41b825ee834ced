import { useEffect, useState } from 'preact/hooks'
import { attempt } from '../lib/attempt'

/** A simple list page: one API call, its rows as a labelled table. */
export function ListPage<T>({ title, label = title, note, load, columns }: {
  title: string
  /** the table's accessible name (default: the title) */
  label?: string
  note: string
  load: () => Promise<T[]>
  columns: [string, (row: T) => string][]
}) {
  const [error, setError] = useState('')
  const [rows, setRows] = useState<T[] | null>(null)
  useEffect(() => {
    attempt(load, setError).then((r) => r && setRows(r))
  }, [])
  return (
    <main class="page">
      <h1>{title}</h1>
      <p class="muted">{note}</p>
      {error && <p role="alert" class="error">{error}</p>}
      {rows && (
        <table aria-label={label} class="list">
          <thead><tr>{columns.map(([h]) => <th scope="col" key={h}>{h}</th>)}</tr></thead>
          <tbody>{rows.map((r, i) => <tr key={i}>{columns.map(([h, f]) => <td key={h}>{f(r)}</td>)}</tr>)}</tbody>
        </table>
      )}
    </main>
  )
}
