import type { RouteEntry } from '../http/route'

export const graphRoutes: RouteEntry[] = []
