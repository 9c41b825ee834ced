import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers'
import { defineConfig } from 'vitest/config'
import path from 'node:path'
import { availableParallelism } from 'node:os'

const root = path.resolve(import.meta.dirname, '..')

// Secrets for the test worker. They exist only here; production secrets come from `wrangler secret put`.
export const TEST_SECRETS = {
  ENVIRONMENT: 'test',
  JWT_SIGNING_KEY: 'test-jwt-signing-key-0123456789abcdef0123456789',
  TOKEN_ENCRYPTION_KEY: 'dGVzdC10b2tlbi1lbmNyeXB0aW9uLWtleS0zMmJ5dGU=',
  BOOTSTRAP_ADMIN_PASSWORD: 'test-admin-password',
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(root, 'migrations'))
  return {
    root,
    plugins: [
      cloudflareTest({
        wrangler: { configPath: path.join(root, 'wrangler.toml') },
        // RATE_LIMIT_COST off: the suites exercise behaviour, and one token per file sends far more weighted
        // requests per second than any real caller; test/integration/ratelimit-cost.test.ts turns it on.
        // AVAILABLE_DOMAINS_FRESH_MS 0: the suites write D1 behind the worker's back and read at once, which
        // the default (1 s without a bookmark) would answer from a fresh copy; read-paths.test.ts covers it.
        miniflare: { bindings: { ...TEST_SECRETS, RATE_LIMIT_COST: 'off', AVAILABLE_DOMAINS_FRESH_MS: '0', TEST_MIGRATIONS: migrations } },
      }),
    ],
    test: {
      include: ['test/**/*.test.ts'],
      // test/cli runs under Node (test/vitest.cli.config.ts), not in workerd
      exclude: ['test/cli/**', '**/node_modules/**'],
      setupFiles: [path.join(root, 'test/setup.ts')],
      // Vitest's default is one file at a time on a 2-core machine (cores - 1), which leaves a core idle: a test
      // file runs inside workerd while vitest's own process mostly waits. Two at a time there halved the wall time
      // of the same 11 integration files (119 s -> 60 s, load average ~3, 2026-11-29); storage stays isolated per
      // file either way.
      maxWorkers: Math.max(2, availableParallelism() - 1),
      testTimeout: 30_000,
      // request log lines only for failing tests
      silent: 'passed-only',
      hookTimeout: 60_000,
    },
  }
})
