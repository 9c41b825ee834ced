// Administration: a sub-navigation of the sections the user's roles allow (admin/model.ts), each its own module.
import { lazy, Suspense } from 'preact/compat'
import { useEffect } from 'preact/hooks'
import type { UserJson } from '../../../../src/client/index'
import { navigate, usePath } from '../../lib/navigate'
import { adminSections, can } from './model'

const FileIngest = lazy(() => import('./ingest'))
const DataPipeline = lazy(() => import('./pipeline'))
const Users = lazy(() => import('./users'))
const SsoProviders = lazy(() => import('./sso'))
const Extensions = lazy(() => import('./extensions'))
const AuditLog = lazy(() => import('./audit'))
const DatabaseManagement = lazy(() => import('./database'))
const CollectorClients = lazy(() => import('./clients'))
const Configuration = lazy(() => import('./configuration'))

export default function Administration({ me }: { me: UserJson }) {
  const path = usePath()
  const sections = adminSections(me)
  const id = path.split('/')[3] ?? ''
  const current = sections.find((s) => s.id === id)
  useEffect(() => {
    if (!current && sections[0]) history.replaceState(null, '', `/ui/administration/${sections[0].id}`), dispatchEvent(new PopStateEvent('popstate'))
  }, [current?.id])
  if (sections.length === 0)
    return (
      <main class="page">
        <h1>Administration</h1>
        <p class="muted">Your role has no administration section.</p>
      </main>
    )
  const groups = [...new Set(sections.map((s) => s.group))]
  return (
    <div class="admin">
      <nav aria-label="Administration" class="subnav">
        {groups.map((g) => (
          <div key={g}>
            <p class="group">{g}</p>
            {sections
              .filter((s) => s.group === g)
              .map((s) => (
                <a
                  key={s.id}
                  href={`/ui/administration/${s.id}`}
                  aria-current={s.id === current?.id ? 'page' : undefined}
                  onClick={(e) => {
                    e.preventDefault()
                    navigate(`/ui/administration/${s.id}`)
                  }}
                >
                  {s.label}
                </a>
              ))}
          </div>
        ))}
      </nav>
      <main class="page">
        <h1 class="sr">Administration</h1>
        <Suspense fallback={<p class="muted">Loading…</p>}>
          {current?.id === 'file-ingest' && <FileIngest canUpload={can(me, 'graph/Ingest')} />}
          {current?.id === 'data-pipeline' && <DataPipeline canRun={can(me, 'analysis/Run')} />}
          {current?.id === 'database-management' && <DatabaseManagement />}
          {current?.id === 'clients' && <CollectorClients />}
          {current?.id === 'users' && <Users meId={me.id} />}
          {current?.id === 'sso' && <SsoProviders />}
          {current?.id === 'extensions' && <Extensions />}
          {current?.id === 'configuration' && <Configuration canWrite={can(me, 'app/WriteAppConfig')} />}
          {current?.id === 'audit' && <AuditLog />}
        </Suspense>
      </main>
    </div>
  )
}
