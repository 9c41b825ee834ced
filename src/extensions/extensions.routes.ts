import type { RouteEntry } from '../http/route'

export const extensionRoutes: RouteEntry[] = []
