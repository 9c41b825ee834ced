import { listAssetGroupTags } from '../../../src/client/assetgroups'
import { client } from '../api'
import { ListPage } from '../components/list-page'

const TAG_TYPES: Record<number, string> = { 1: 'Tier', 2: 'Label', 3: 'Owned' }

export default function Zones() {
  return (
    <ListPage
      title="Privilege zones"
      note="Tags (Tier Zero, Owned and custom labels); selectors and members are not in the console yet."
      load={async () => (await listAssetGroupTags(client)).data.tags}
      columns={[['Name', (t) => t.name], ['Type', (t) => TAG_TYPES[t.type] ?? String(t.type)], ['Description', (t) => t.description]]}
    />
  )
}
