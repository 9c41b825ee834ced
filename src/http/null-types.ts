import { z } from 'zod'

/**
 * BloodHound's nullable time on the wire (Go's sql.NullTime / null.Time as JSON): `valid` false means no
 * time, and `time` then holds the zero time. The routes that answer with one describe it with this schema.
 */
export const NullTime = z.object({ time: z.string(), valid: z.boolean() })
