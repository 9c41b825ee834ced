/** Every migration applied to a fresh local D1 under `persist` (see local-d1.mjs). */
export function applyMigrations(persist: string): Promise<void>
