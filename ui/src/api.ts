/**
 * The console's one client: the project's typed client (src/client), pointed at this origin. The session is an
 * HttpOnly cookie the browser sends by itself; mutations carry the CSRF proof from the readable `csrf` cookie.
 */
import { EdgeHoundClient } from '../../src/client/index'

export const client = new EdgeHoundClient({ baseUrl: location.origin, fetch: (r) => fetch(r) })
