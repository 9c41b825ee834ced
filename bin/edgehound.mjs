#!/usr/bin/env node
// `npx edgehound ...`: the CLI is TypeScript (src/cli/main.ts), run through tsx's loader, so there is no
// build step and the CLI always matches the typed client in src/client.
import { register } from 'tsx/esm/api'

register({ tsconfig: false })
const { run } = await import('../src/cli/main.ts')
process.exitCode = await run(process.argv.slice(2))
