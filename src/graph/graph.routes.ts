import type { RouteEntry } from '../http/route'
import { ingestRoutes } from './ingest.routes'

/** Every graph route: ingest jobs, then the reads. Order matters where paths overlap (`start` before `:id`). */
export const graphRoutes: RouteEntry[] = [...ingestRoutes]
