import type { RouteEntry } from '../http/route'

export const samlRoutes: RouteEntry[] = []
