import { defineConfig } from 'vitest/config'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')

// The CLI and the example connector run under Node, not workerd: this suite runs them in-process (and
// through bin/edgehound.mjs) against small node:http fake servers. Run: npx vitest run --config test/vitest.cli.config.ts
export default defineConfig({
  root,
  test: {
    include: ['test/cli/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    pool: 'forks',
  },
})
