import { availableDomains } from '../../../src/client/graph'
import { client } from '../api'
import { ListPage } from '../components/list-page'

type Environment = { id: string; name: string; type: string; collected: boolean }

export default function AttackPaths() {
  return (
    <ListPage<Environment>
      title="Attack paths"
      label="Environments"
      note="Environments with collected data (finding details are not in the console yet)."
      load={async () => (await availableDomains(client)).data as unknown as Environment[]}
      columns={[['Name', (e) => e.name], ['Type', (e) => e.type], ['Id', (e) => e.id], ['Collected', (e) => (e.collected ? 'yes' : 'no')]]}
    />
  )
}
