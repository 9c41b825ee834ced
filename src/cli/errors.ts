/** A failure the CLI reports as one message and exit status 1 (2 for usage errors). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

/** Wrong command line: exit status 2 and a pointer to `--help`. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2)
    this.name = 'UsageError'
  }
}
