// The selected relationship's panel: its ends and kind, and the relationship's help text (what it means, how it
// is abused, OPSEC, references) from ui/src/help/relationships.ts (`relationshipHelp(kind)`), loaded on first use.
import { useEffect, useState } from 'preact/hooks'
import type { RelationshipHelp } from '../../help/relationships'
import type { ConsoleEdge, ConsoleNode } from './graph-model'

export default function EdgePanel({ edge, source, target, onClose }: { edge: ConsoleEdge; source?: ConsoleNode; target?: ConsoleNode; onClose: () => void }) {
  const [help, setHelp] = useState<RelationshipHelp | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    setHelp(null)
    let live = true
    import('../../help/relationships').then(
      (m) => live && setHelp(m.relationshipHelp(edge.kind)),
      () => live && setError('The help text could not be loaded.'),
    )
    return () => {
      live = false
    }
  }, [edge.kind])
  return (
    <aside class="panel" aria-label={`Relationship ${edge.kind}`}>
      <header>
        <h2>{edge.kind}</h2>
        <button class="secondary" onClick={onClose} aria-label="Close panel">×</button>
      </header>
      <dl>
        <dt>From</dt>
        <dd>{source?.name ?? edge.source}</dd>
        <dt>To</dt>
        <dd>{target?.name ?? edge.target}</dd>
      </dl>
      <section class="help" aria-label={`About ${edge.kind}`}>
        {error && <p role="alert" class="error">{error}</p>}
        {!help && !error && <p class="muted">Loading the help…</p>}
        {help && (
          <>
            {!help.known && <p class="muted">EdgeHound has no specific text for {edge.kind}; what follows applies to any relationship.</p>}
            <h4>What it means</h4>
            <p>{help.meaning}</p>
            <h4>Abuse</h4>
            <p>{help.abuse}</p>
            <h4>OPSEC</h4>
            <p>{help.opsec}</p>
            {help.references.length > 0 && (
              <>
                <h4>References</h4>
                <ul>
                  {help.references.map((r) => (
                    <li key={r}><a href={r} rel="noreferrer noopener" target="_blank">{r}</a></li>
                  ))}
                </ul>
              </>
            )}
          </>
        )}
      </section>
    </aside>
  )
}
