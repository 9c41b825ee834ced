import type { RouteEntry } from '../http/route'

export const docsRoutes: RouteEntry[] = []
