/** Reported by GET /api/version. Keep in step with package.json. */
export const SERVER_VERSION = 'v0.1.0'
