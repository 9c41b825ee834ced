import { goSignIn, isSignedOut, messageOf } from '../api'

/** Runs an API call; an ended session goes back to sign-in, other failures become the message shown. */
export async function attempt<T>(fn: () => Promise<T>, setError: (m: string) => void): Promise<T | undefined> {
  try {
    setError('')
    return await fn()
  } catch (e) {
    if (isSignedOut(e)) goSignIn()
    else setError(messageOf(e))
    return undefined
  }
}
