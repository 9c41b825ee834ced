import type { RouteEntry } from '../http/route'
import { ingestRoutes } from './ingest.routes'
import { readRoutes } from './read.routes'
import { entityRoutes } from './entity.routes'
import { schemaRoutes } from './schema.routes'
import { pathfindingRoutes } from './pathfinding.routes'
import { edgeRoutes } from './edge.routes'
import { domainRoutes } from './domain.routes'

/** Every graph route: ingest jobs, then the reads. Order matters where paths overlap (`start` before `:id`). */
export const graphRoutes: RouteEntry[] = [...ingestRoutes, ...readRoutes, ...entityRoutes, ...schemaRoutes, ...pathfindingRoutes, ...edgeRoutes, ...domainRoutes]
