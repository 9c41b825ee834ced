/** Stylesheet of the API explorer (served at /api/v2/docs/explorer.css). */
export const EXPLORER_CSS = String.raw`
:root {
  --bg: #f7f8fa; --fg: #1d2330; --muted: #5d6675; --panel: #ffffff; --line: #d9dde5; --accent: #3451b2;
  --get: #1f7a4d; --post: #3451b2; --put: #8a5a00; --patch: #6b46c1; --delete: #b42318; --ok: #1f7a4d; --err: #b42318;
  --code: #eef1f6;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151c; --fg: #e4e7ee; --muted: #9aa3b2; --panel: #1a1f29; --line: #2e3545; --accent: #8ea2ff; --code: #232a37;
    --get: #4cc38a; --post: #8ea2ff; --put: #e5b454; --patch: #b794f4; --delete: #f97066; --ok: #4cc38a; --err: #f97066; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 1rem 1.25rem 4rem; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--accent); }
h1 { font-size: 1.5rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
code, pre, textarea, input, select { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--code); padding: .6rem .75rem; border-radius: 6px; overflow: auto; max-height: 28rem; margin: .4rem 0; white-space: pre-wrap; word-break: break-word; }
.muted { color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.top .brand { display: flex; align-items: baseline; gap: .75rem; }
.top p { margin: .25rem 0 1rem; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin-bottom: 1rem; }
.panel .row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .35rem 0; }
.panel label { font-size: .85rem; color: var(--muted); }
input, select, textarea { background: var(--bg); color: var(--fg); border: 1px solid var(--line); border-radius: 5px; padding: .35rem .5rem; }
input[type=text], input[type=password], input[type=search] { min-width: 16rem; }
textarea { width: 100%; min-height: 8rem; resize: vertical; }
button { background: var(--accent); color: #fff; border: 0; border-radius: 5px; padding: .4rem .9rem; cursor: pointer; font-weight: 600; }
button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--line); }
button:disabled { opacity: .6; cursor: progress; }
.toolbar { display: flex; gap: .75rem; align-items: center; margin: .5rem 0 1rem; }
.toolbar input { flex: 1; }
.tag-group > h2 { border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
.tag-group > h2 .muted { font-weight: normal; font-size: .85rem; margin-left: .5rem; }
details.op { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; margin: .4rem 0; }
details.op > summary { cursor: pointer; padding: .5rem .75rem; display: flex; gap: .6rem; align-items: baseline; list-style: none; flex-wrap: wrap; }
details.op > summary::-webkit-details-marker { display: none; }
details.op[open] > summary { border-bottom: 1px solid var(--line); }
details.op.deprecated .path { text-decoration: line-through; }
.method { display: inline-block; min-width: 4.2rem; text-align: center; font: 700 12px/1.6 ui-monospace, monospace; color: #fff; border-radius: 4px; padding: 0 .35rem; }
.m-get { background: var(--get); } .m-post { background: var(--post); } .m-put { background: var(--put); }
.m-patch { background: var(--patch); } .m-delete { background: var(--delete); } .m-head, .m-options { background: var(--muted); }
.path { font-weight: 600; word-break: break-all; }
.summary { color: var(--muted); }
.badge { font-size: .75rem; border: 1px solid var(--line); border-radius: 999px; padding: 0 .45rem; color: var(--muted); }
.badge.lock { border-color: var(--accent); color: var(--accent); }
.op-body { padding: .5rem .9rem 1rem; }
table.params { border-collapse: collapse; width: 100%; margin: .25rem 0; }
table.params td, table.params th { text-align: left; vertical-align: top; padding: .3rem .4rem; border-bottom: 1px solid var(--line); font-size: .9rem; }
table.params input, table.params select { width: 100%; min-width: 8rem; }
.required { color: var(--err); }
.actions { display: flex; gap: .5rem; align-items: center; margin: .75rem 0 .25rem; }
.result .status { font-weight: 700; }
.result .status.ok { color: var(--ok); }
.result .status.err { color: var(--err); }
.result .error-messages { color: var(--err); margin: .25rem 0; }
.responses li { margin: .15rem 0; }
.notice { border-left: 3px solid var(--accent); padding: .25rem .6rem; margin: .5rem 0; }
.notice.err { border-color: var(--err); color: var(--err); }
.hidden { display: none !important; }
`
