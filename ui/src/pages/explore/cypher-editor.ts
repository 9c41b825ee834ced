// The Cypher editor: CodeMirror 6 with Cypher highlighting (@codemirror/legacy-modes). Loaded on first use.
import { EditorView, basicSetup } from 'codemirror'
import { StreamLanguage } from '@codemirror/language'
import { cypher } from '@codemirror/legacy-modes/mode/cypher'

export interface CypherEditorHandle {
  destroy(): void
  /** replaces the text (a saved or pre-built query chosen from a list) */
  set(text: string): void
}

export function mountCypherEditor(parent: HTMLElement, initial: string, onChange: (text: string) => void, onRun: () => void): CypherEditorHandle {
  const view = new EditorView({
    parent,
    doc: initial,
    extensions: [
      basicSetup,
      StreamLanguage.define(cypher),
      EditorView.contentAttributes.of({ 'aria-label': 'Cypher query', role: 'textbox', 'aria-multiline': 'true' }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged) onChange(u.state.doc.toString())
      }),
      EditorView.domEventHandlers({
        keydown: (e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault()
            onRun()
            return true
          }
          return false
        },
      }),
    ],
  })
  return {
    destroy: () => view.destroy(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
  }
}
