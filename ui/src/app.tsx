// The console's shell: routing, navigation and the session. Each page is its own module under pages/, loaded
// when first visited (sign-in is in the entry chunk so that it is interactive at once).
import { lazy, Suspense } from 'preact/compat'
import { useEffect, useState } from 'preact/hooks'
import type { ComponentType } from 'preact'
import type { UserJson } from '../../src/client/index'
import { client } from './api'
import { attempt } from './lib/attempt'
import { navigate, usePath } from './lib/navigate'
import { SignIn, UserDisabled } from './pages/sign-in'

/** The navigation, in order: label, path prefix, page module. */
const PAGES: { label: string; href: string; page: ComponentType }[] = [
  { label: 'Explore', href: '/ui/explore', page: lazy(() => import('./pages/explore/index')) },
  { label: 'Attack paths', href: '/ui/attack-paths', page: lazy(() => import('./pages/attack-paths')) },
  { label: 'Posture', href: '/ui/posture', page: NotYet },
  { label: 'Privilege zones', href: '/ui/privilege-zones', page: lazy(() => import('./pages/zones')) },
  { label: 'Administration', href: '/ui/administration', page: lazy(() => import('./pages/admin/index')) },
]

export function App() {
  const path = usePath()
  if (path === '/ui/login') return <SignIn />
  if (path === '/ui/user-disabled') return <UserDisabled />
  return <Shell path={path} />
}

function Shell({ path }: { path: string }) {
  const [me, setMe] = useState<UserJson | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    attempt(() => client.self(), setError).then((r) => r && setMe(r.data))
  }, [])
  useEffect(() => {
    if (path === '/ui') navigate('/ui/explore')
  }, [path])
  async function signOut() {
    await attempt(() => client.logout(), setError)
    location.assign('/ui/login')
  }
  if (!me) return <main class="center">{error ? <p role="alert" class="error">{error}</p> : <p class="muted">Loading…</p>}</main>
  const current = PAGES.find((p) => path.startsWith(p.href))
  const Page = current?.page ?? NotYet
  return (
    <div class="shell">
      <header>
        <span class="brand">EdgeHound</span>
        <nav aria-label="Main">
          {PAGES.map(({ label, href }) => (
            <a
              href={href}
              key={href}
              aria-current={path.startsWith(href) ? 'page' : undefined}
              onClick={(e) => {
                e.preventDefault()
                navigate(href)
              }}
            >
              {label}
            </a>
          ))}
        </nav>
        <span class="me">{me.principal_name}</span>
        <button class="secondary" onClick={signOut}>Sign out</button>
      </header>
      {error && <p role="alert" class="error">{error}</p>}
      <Suspense fallback={<main class="page"><p class="muted">Loading…</p></main>}>
        <Page />
      </Suspense>
    </div>
  )
}

function NotYet() {
  const path = location.pathname
  const label = PAGES.find((p) => path.startsWith(p.href))?.label ?? 'This page'
  return (
    <main class="page">
      <h1>{label}</h1>
      <p class="muted">{label} is not in the console yet; the API serves it (see /api/v2/docs).</p>
    </main>
  )
}
