// The Cypher editor: CodeMirror 6 with Cypher highlighting (@codemirror/legacy-modes). Loaded on first use.
import { EditorView, basicSetup } from 'codemirror'
import { StreamLanguage } from '@codemirror/language'
import { cypher } from '@codemirror/legacy-modes/mode/cypher'

export function mountCypherEditor(parent: HTMLElement, initial: string, onChange: (text: string) => void, onRun: () => void): () => void {
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
  return () => view.destroy()
}
