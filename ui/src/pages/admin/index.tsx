import { client } from '../../api'
import { ListPage } from '../../components/list-page'

export default function Administration() {
  return (
    <ListPage
      title="Administration"
      note="Users and their roles; ingest, tokens, SSO providers, extensions and the audit log are not in the console yet."
      load={async () => (await client.listUsers()).data.users}
      columns={[
        ['User', (u) => u.principal_name],
        ['Roles', (u) => u.roles.join(', ')],
        ['Environments', (u) => (u.all_environments ? 'all' : u.environment_access.join(', ') || 'none')],
        ['Status', (u) => (u.is_disabled ? 'disabled' : 'active')],
      ]}
    />
  )
}
