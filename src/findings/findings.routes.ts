import type { RouteEntry } from '../http/route'

export const findingRoutes: RouteEntry[] = []
