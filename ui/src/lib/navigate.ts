// Client-side routing: the console is one page; links push a history entry and the shell re-renders.
import { useEffect, useState } from 'preact/hooks'

export function navigate(to: string) {
  history.pushState(null, '', to)
  dispatchEvent(new PopStateEvent('popstate'))
}

/** The current path, without trailing slashes ('/ui' for the console's root); follows navigation. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname)
  useEffect(() => {
    const on = () => setPath(location.pathname)
    addEventListener('popstate', on)
    return () => removeEventListener('popstate', on)
  }, [])
  return path.replace(/\/+$/, '') || '/ui'
}
