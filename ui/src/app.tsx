// The console's shell: routing, navigation and the session. Each page is its own module under pages/, loaded
// when first visited (sign-in is in the entry chunk so that it is interactive at once).
import { lazy, Suspense } from 'preact/compat'
import { useEffect, useState } from 'preact/hooks'
import type { ComponentType } from 'preact'
import type { UserJson } from '../../src/client/index'
import { client } from './api'
import { attempt } from './lib/attempt'
import { navigate, usePath } from './lib/navigate'
import { Me } from './lib/session'
import { SignIn, UserDisabled } from './pages/sign-in'
import { homePath, mainPages } from './pages/admin/model'
// in the entry chunk: the forced password change must show without another request
import Profile, { ChangePassword } from './pages/profile'

/** The navigation, in order: label, path prefix, page module. */
const PAGES: { label: string; href: string; page: ComponentType<{ me: UserJson }> }[] = [
  { label: 'Explore', href: '/ui/explore', page: lazy(() => import('./pages/explore/index')) },
  { label: 'Attack paths', href: '/ui/attack-paths', page: lazy(() => import('./pages/attack-paths')) },
  { label: 'Posture', href: '/ui/posture', page: lazy(() => import('./pages/posture')) },
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
  const loadMe = () => attempt(() => client.self(), setError).then((r) => r && setMe(r.data))
  useEffect(() => {
    loadMe()
  }, [])
  // Only what the user's roles allow (pages/admin/model.ts): the console's root and a page the role may not
  // use lead to the user's home (Explore, or the ingest page for Upload-Only). The API refuses anyway.
  const pages = me ? mainPages(me, PAGES) : []
  const current = PAGES.find((p) => path.startsWith(p.href))
  const allowed = !current || pages.includes(current)
  useEffect(() => {
    if (me && (path === '/ui' || !allowed)) navigate(homePath(me))
  }, [path, me, allowed])
  async function signOut() {
    await attempt(() => client.logout(), setError)
    location.assign('/ui/login')
  }
  if (!me) return <main class="center">{error ? <p role="alert" class="error">{error}</p> : <p class="muted">Loading…</p>}</main>
  // First sign-in with a password an administrator set, or an expired one: nothing else until it is changed.
  if (me.needs_password_reset)
    return (
      <main class="center wide">
        <h1 class="brand">EdgeHound</h1>
        <ChangePassword me={me} forced onChanged={() => loadMe().then(() => navigate(homePath(me)))} />
        <p><button class="secondary" onClick={signOut}>Sign out</button></p>
      </main>
    )
  const Page = path.startsWith('/ui/profile') ? null : current && allowed ? current.page : NotYet
  return (
    <Me.Provider value={me}>
    <div class="shell">
      <header>
        <span class="brand">EdgeHound</span>
        <nav aria-label="Main">
          {pages.map(({ label, href }) => (
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
        <a
          class="me"
          href="/ui/profile"
          aria-current={path.startsWith('/ui/profile') ? 'page' : undefined}
          onClick={(e) => {
            e.preventDefault()
            navigate('/ui/profile')
          }}
        >
          {me.principal_name}
        </a>
        <button class="secondary" onClick={signOut}>Sign out</button>
      </header>
      {error && <p role="alert" class="error">{error}</p>}
      <Suspense fallback={<main class="page"><p class="muted">Loading…</p></main>}>
        {Page ? <Page me={me} /> : <Profile me={me} onSignOut={signOut} />}
      </Suspense>
    </div>
    </Me.Provider>
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
