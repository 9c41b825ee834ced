// Right-click on a node (on the graph, or on its row of the table view; Shift+F10 there too): set it as the
// start or end of a path search, mark it Owned, add it to or remove it from Tier Zero. The last two need the
// graph/ManageAssetGroups permission over every environment and are offered only then (lib/permissions.ts);
// they change the asset groups' object-id selectors (PUT /api/v2/asset-groups/{id}/selectors), which the next
// analysis run applies.
import { useEffect, useRef } from 'preact/hooks'
import type { ConsoleNode } from './graph-model'

export interface MenuAction {
  label: string
  run: () => void
}

export default function ContextMenu({ node, x, y, actions, onClose }: { node: ConsoleNode; x: number; y: number; actions: MenuAction[]; onClose: () => void }) {
  const menu = useRef<HTMLDivElement>(null)
  useEffect(() => {
    menu.current?.querySelector<HTMLButtonElement>('[role=menuitem]')?.focus()
    const away = (e: MouseEvent) => {
      if (!menu.current?.contains(e.target as Node)) onClose()
    }
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose()
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault()
        const items = [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role=menuitem]') ?? [])]
        const i = items.indexOf(document.activeElement as HTMLButtonElement)
        items[(i + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus()
      }
    }
    addEventListener('mousedown', away)
    addEventListener('keydown', key)
    return () => {
      removeEventListener('mousedown', away)
      removeEventListener('keydown', key)
    }
  }, [])
  const left = Math.min(x, innerWidth - 240)
  const top = Math.min(y, innerHeight - 40 * (actions.length + 1))
  return (
    <div ref={menu} role="menu" aria-label={`Actions for ${node.name}`} class="context-menu" style={{ left: `${left}px`, top: `${top}px` }}>
      {actions.map((a) => (
        <button
          role="menuitem"
          key={a.label}
          onClick={() => {
            onClose()
            a.run()
          }}
        >
          {a.label}
        </button>
      ))}
    </div>
  )
}
