/** The viewer's one style sheet (served as /style.css: the CSP allows no inline style). */
export const STYLE_CSS = `
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fafafa; --dim: #6a737d; --line: #d0d7de; --accent: #0969da; --tool: #9a6700; --red: #cf222e; --pane: #f0f2f4; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --dim: #8b949e; --line: #30363d; --accent: #58a6ff; --tool: #d29922; --red: #f85149; --pane: #161b22; } }
* { box-sizing: border-box; }
body { margin: 0; display: flex; height: 100vh; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
#side { width: 320px; min-width: 220px; border-right: 1px solid var(--line); display: flex; flex-direction: column; background: var(--pane); }
#search { margin: 10px; padding: 6px 8px; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
#sessions { list-style: none; margin: 0; padding: 0; overflow-y: auto; flex: 1; }
#sessions li { padding: 8px 12px; border-bottom: 1px solid var(--line); cursor: pointer; display: flex; flex-direction: column; gap: 2px; }
#sessions li:hover, #sessions li.current { background: var(--bg); }
#sessions .title { font-weight: 600; overflow-wrap: anywhere; }
#sessions .meta, #sessions .snippet { color: var(--dim); font-size: 12px; overflow-wrap: anywhere; }
#sessions .empty { color: var(--dim); cursor: default; }
#main { flex: 1; overflow-y: auto; padding: 16px 24px; }
#header h1 { font-size: 20px; margin: 0 0 4px; overflow-wrap: anywhere; }
#header .facts, #header .hint, #live { color: var(--dim); font-size: 12px; margin: 2px 0; }
#header .system { white-space: pre-wrap; border-left: 3px solid var(--line); padding-left: 8px; margin: 8px 0; }
.entry { border-top: 1px solid var(--line); padding: 6px 0; }
.entry .head { display: flex; gap: 10px; font-size: 12px; color: var(--dim); align-items: baseline; }
.entry .who { font-weight: 600; color: var(--fg); }
.role-user { color: #1a7f37 !important; }
.role-assistant { color: var(--accent) !important; }
.role-tool, .kind-toolStart .who, .kind-toolStream .who, .kind-toolFinish .who { color: var(--tool) !important; }
.kind-interruption .who { color: var(--red) !important; }
.entry .body { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 0 0; font: 13px/1.4 ui-monospace, monospace; }
.is-result .body, .kind-toolStream .body { max-height: 320px; overflow: auto; background: var(--pane); padding: 6px; }
.entry .toolcall { font: 13px/1.4 ui-monospace, monospace; margin: 4px 0 0 0; overflow-wrap: anywhere; }
.toolcall .name { font-weight: 600; color: var(--tool); }
.toolcall .id { color: var(--dim); }
details.entry summary { cursor: pointer; list-style: none; }
details.entry summary::before { content: "\\25B8  "; color: var(--dim); }
details.entry[open] summary::before { content: "\\25BE  "; }
.compaction .who { color: #8250df !important; }
.redacted { background: var(--red); color: #fff; border-radius: 3px; padding: 0 3px; }
.entry.new { animation: flash 1.5s ease-out; }
@keyframes flash { from { background: rgba(255, 210, 0, 0.35); } to { background: transparent; } }
`;
