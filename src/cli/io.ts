/// <reference types="node" />
/**
 * Everything the CLI touches outside itself, in one object, so that tests run commands in-process
 * against a fake server with captured output, a fixed environment and no real sleeping.
 */
import { readFile } from 'node:fs/promises'
import os from 'node:os'

export interface OutStream {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

export interface CliIO {
  stdout: OutStream
  stderr: OutStream
  /** whole standard input (for `--data @-`, `--password-stdin`, `--token-key-file -`) */
  readStdin(): Promise<Uint8Array>
  /** asks on the terminal without echo (passwords); undefined when there is no terminal */
  promptSecret?: (question: string) => Promise<string>
  env: Record<string, string | undefined>
  cwd: string
  homedir: string
  fetch: (req: Request) => Promise<Response>
  sleep(ms: number): Promise<void>
  now(): Date
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer))
  return new Uint8Array(Buffer.concat(chunks))
}

/** Reads a line from the terminal with echo switched off. */
function promptHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin
    process.stderr.write(question)
    let value = ''
    const wasRaw = stdin.isRaw
    stdin.setRawMode?.(true)
    stdin.resume()
    stdin.setEncoding('utf8')
    const done = (err?: Error) => {
      stdin.setRawMode?.(wasRaw ?? false)
      stdin.pause()
      stdin.removeListener('data', onData)
      process.stderr.write('\n')
      if (err) reject(err)
      else resolve(value)
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done()
        if (ch === '\u0003') return done(new Error('cancelled'))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else value += ch
      }
    }
    stdin.on('data', onData)
  })
}

let pipeHandled = false

/**
 * `edgehound … | head`: once the reader has what it wants it closes the pipe, and the next write to stdout
 * fails with EPIPE, which Node reports as an unhandled 'error' event (a stack trace on stderr, exit 1).
 * A POSIX tool is stopped by SIGPIPE at that point, silently; we stop the same way, silently, with status 0
 * (the reader took what it asked for). Any other error on the stream is still thrown. `exit` is for tests.
 */
export function exitQuietlyOnClosedPipe(streams: NodeJS.WritableStream[] = [process.stdout, process.stderr], exit: (code: number) => void = (c) => process.exit(c)): void {
  for (const s of streams)
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') exit(0)
      else throw e
    })
}

export function nodeIO(): CliIO {
  if (!pipeHandled) {
    pipeHandled = true
    exitQuietlyOnClosedPipe()
  }
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    readStdin: () => readAll(process.stdin),
    promptSecret: process.stdin.isTTY ? promptHidden : undefined,
    env: process.env,
    cwd: process.cwd(),
    homedir: os.homedir(),
    fetch: (req) => fetch(req),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => new Date(),
  }
}

export { readFile }
