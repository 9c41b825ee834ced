declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import('cloudflare:test').D1Migration[]
  }
}

// Vite's `?raw` import of a Markdown file (docs the tests check against the code, e.g. docs/compatibility.md).
declare module '*.md?raw' {
  const text: string
  export default text
}
