import { DurableObject } from 'cloudflare:workers'

/** Runs attack-path analysis off the request path (filled in by the findings work). */
export class Analyzer extends DurableObject<Env> {}
