import { EdgeHoundClient, EdgeHoundError } from '../../client'
import type { Command } from '../command'
import { jwtExpiry, updateProfile } from '../config'
import { CliError, UsageError } from '../errors'

async function readPassword(ctx: Parameters<Command['run']>[0], fromStdin: boolean): Promise<string> {
  if (fromStdin) {
    const text = new TextDecoder().decode(await ctx.io.readStdin()).replace(/\r?\n$/, '')
    if (!text) throw new CliError('no password on standard input')
    return text
  }
  if (ctx.io.env.EDGEHOUND_PASSWORD) return ctx.io.env.EDGEHOUND_PASSWORD
  if (!ctx.io.promptSecret)
    throw new UsageError('no terminal to ask for the password: pipe it with --password-stdin or set EDGEHOUND_PASSWORD')
  return ctx.io.promptSecret('Password: ')
}

export const login: Command = {
  name: 'login',
  summary: 'Log in with a user name and password; stores the server URL and session in the profile',
  description:
    'The password is read from a no-echo prompt, from standard input (--password-stdin) or from\n' +
    'EDGEHOUND_PASSWORD. The session (a JWT, valid for SESSION_TTL_HOURS) is stored in the profile file\n' +
    '(mode 0600). With --create-token NAME an API token is created as well and its id and key are stored,\n' +
    'so later commands sign their requests and keep working after the session expires.',
  maxArgs: 0,
  options: {
    username: { type: 'string', short: 'u', value: 'NAME', description: 'user name (default: the profile\'s user, else "admin")' },
    'password-stdin': { type: 'boolean', description: 'read the password from standard input' },
    'create-token': { type: 'string', value: 'NAME', description: 'also create an API token with this name and store it' },
  },
  async run(ctx, _args, opts) {
    const s = await ctx.settings()
    if (!s.url) throw new UsageError('no server URL: pass --url URL (it is stored in the profile for next time)')
    const prof = (await ctx.configFile()).profiles[s.profileName] ?? {}
    const username = (opts.username as string | undefined) ?? prof.username ?? 'admin'
    const password = await readPassword(ctx, !!opts['password-stdin'])
    const anon = new EdgeHoundClient({ baseUrl: s.url, fetch: ctx.io.fetch, now: ctx.io.now, bookmarks: ctx.bookmarks })
    const r = await anon.login(username, password)
    const jwt = r.data.session_token
    const patch: Record<string, string | undefined> = { url: s.url, username, session_token: jwt }
    let token: { id: string; key: string; name: string } | undefined
    if (opts['create-token']) {
      const t = await anon.withCredentials({ kind: 'bearer', jwt }).createToken(opts['create-token'] as string)
      token = { id: t.data.id, key: t.data.key, name: t.data.name }
      patch.token_id = token.id
      patch.token_key = token.key
    }
    await updateProfile(ctx.configPath, s.profileName, patch)
    const exp = jwtExpiry(jwt)
    if (ctx.json) {
      ctx.out.data({
        profile: s.profileName,
        url: s.url,
        user_id: r.data.user_id,
        username,
        session_expires_at: exp?.toISOString() ?? null,
        token_id: token?.id ?? null,
      })
    } else {
      ctx.out.line(`Logged in to ${s.url} as ${username} (profile "${s.profileName}", ${ctx.configPath}).`)
      if (exp) ctx.out.line(`The session expires at ${exp.toISOString()}.`)
      if (token) ctx.out.line(`API token "${token.name}" (${token.id}) created and stored; requests are now signed with it.`)
      if (r.data.auth_expired) ctx.out.line('Note: the password has expired; change it before it is refused.')
    }
    return 0
  },
}

export const logout: Command = {
  name: 'logout',
  summary: 'End the stored session on the server and remove it from the profile',
  maxArgs: 0,
  options: { 'forget-token': { type: 'boolean', description: 'also remove the stored API token id and key (the token stays valid)' } },
  async run(ctx, _args, opts) {
    const s = await ctx.settings()
    const prof = (await ctx.configFile()).profiles[s.profileName] ?? {}
    let ended = 0
    if (prof.session_token && s.url) {
      const c = new EdgeHoundClient({ baseUrl: s.url, credentials: { kind: 'bearer', jwt: prof.session_token }, fetch: ctx.io.fetch, now: ctx.io.now, bookmarks: ctx.bookmarks })
      try {
        ended = (await c.logout()).data.sessions_ended
      } catch (e) {
        // An expired session cannot be ended and need not be: forget it locally anyway.
        if (!(e instanceof EdgeHoundError && e.status === 401)) throw e
      }
    }
    await updateProfile(ctx.configPath, s.profileName, {
      session_token: undefined,
      ...(opts['forget-token'] ? { token_id: undefined, token_key: undefined } : {}),
    })
    if (ctx.json) ctx.out.data({ profile: s.profileName, sessions_ended: ended })
    else ctx.out.line(`Logged out (profile "${s.profileName}"${ended ? `, ${ended} session(s) ended on the server` : ''}).`)
    return 0
  },
}

export const tokenCreate: Command = {
  name: 'token create',
  summary: 'Create an API token; its key is shown once',
  args: 'NAME',
  minArgs: 1,
  maxArgs: 1,
  options: {
    user: { type: 'string', value: 'USER_ID', description: 'create the token for another user (administrators)' },
    save: { type: 'boolean', description: 'store the token id and key in the profile and sign later requests with it' },
  },
  async run(ctx, [name], opts) {
    const c = await ctx.client()
    const r = await c.createToken(name, opts.user as string | undefined)
    if (opts.save) {
      const s = await ctx.settings()
      await updateProfile(ctx.configPath, s.profileName, { url: s.url, token_id: r.data.id, token_key: r.data.key })
    }
    if (ctx.json) {
      ctx.out.data(r.data)
      return 0
    }
    ctx.out.keyValues([
      ['id', r.data.id],
      ['name', r.data.name],
      ['user_id', r.data.user_id],
      ['key', r.data.key],
    ])
    ctx.out.info(
      opts.save
        ? `The token is stored in profile "${(await ctx.settings()).profileName}".`
        : 'The key is shown only once: store it now (for example EDGEHOUND_TOKEN_KEY) and never commit it.',
    )
    return 0
  },
}

export const tokenList: Command = {
  name: 'token list',
  summary: 'List API tokens (never their keys)',
  maxArgs: 0,
  options: { user: { type: 'string', value: 'USER_ID', description: "only this user's tokens (administrators)" } },
  async run(ctx, _args, opts) {
    const c = await ctx.client()
    const target = opts.user ? `/api/v2/tokens?user_id=${encodeURIComponent(opts.user as string)}` : '/api/v2/tokens'
    const r = await c.call<Awaited<ReturnType<typeof c.listTokens>>>('GET', target)
    if (ctx.json) ctx.out.data(r.data.tokens)
    else if (r.data.tokens.length === 0) ctx.out.line('No tokens.')
    else ctx.out.table(r.data.tokens as unknown as Record<string, unknown>[], ['id', 'name', 'user_id', 'created_at', 'last_access'])
    return 0
  },
}

export const tokenRevoke: Command = {
  name: 'token revoke',
  summary: 'Revoke an API token (it fails on its very next request)',
  args: 'TOKEN_ID',
  minArgs: 1,
  maxArgs: 1,
  async run(ctx, [id]) {
    const c = await ctx.client()
    const r = await c.revokeToken(id)
    const s = await ctx.settings()
    const prof = (await ctx.configFile()).profiles[s.profileName]
    if (prof?.token_id === id) await updateProfile(ctx.configPath, s.profileName, { token_id: undefined, token_key: undefined })
    if (ctx.json) ctx.out.data(r.data)
    else ctx.out.line(`Token ${id} revoked.${prof?.token_id === id ? ' It was removed from the profile too.' : ''}`)
    return 0
  },
}
