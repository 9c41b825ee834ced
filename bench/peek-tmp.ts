import { hotFunctions } from './lib/inspector'
async function main() {
  const ws = new (globalThis as any).WebSocket(process.argv[2])
  await new Promise((r, j) => { ws.addEventListener('open', r); ws.addEventListener('error', j) })
  let id = 1; const pend = new Map<number, (v: any) => void>()
  ws.addEventListener('message', (ev: any) => { const m = JSON.parse(String(ev.data)); if (m.id && pend.has(m.id)) { pend.get(m.id)!(m.result); pend.delete(m.id) } })
  const send = (method: string, params = {}) => new Promise<any>((r) => { const i = id++; pend.set(i, r); ws.send(JSON.stringify({ id: i, method, params })) })
  await send('Profiler.enable'); await send('Profiler.setSamplingInterval', { interval: 1000 }); await send('Profiler.start')
  await new Promise((r) => setTimeout(r, 6000))
  const p = await Promise.race([send('Profiler.stop'), new Promise((r) => setTimeout(() => r(null), 20000))])
  console.log(p ? JSON.stringify(hotFunctions((p as any).profile, 10)) : 'no answer (isolate busy)')
  ws.close()
}
main()
