"""The report's stylesheet (inline in the page: nothing is loaded from anywhere)."""

from __future__ import annotations


def stylesheet(families: list[str]) -> str:
    """The CSS, with the embedded fonts' ``families`` first in every font list."""
    ui = ", ".join([*families, "system-ui", "sans-serif"])
    mono = ", ".join(["ui-monospace", '"DejaVu Sans Mono"', "monospace", *families])
    return _CSS.replace("$UI", ui).replace("$MONO", mono)


_CSS = """
:root { --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
  --ok: #1a7f37; --fail: #cf222e; --run: #9a6700; --go: #0969da; --mark: #ff00c8; }
* { box-sizing: border-box; }
body { margin: 0; font-family: $UI; color: var(--ink); background: var(--bg); font-size: 15px;
  line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 24px; margin: 0 0 8px; overflow-wrap: anywhere; }
h2 { font-size: 19px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 10px; display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
h3 a { color: inherit; text-decoration: none; }
code, pre { font-family: $MONO; font-size: 13px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; padding: 8px 10px; background: var(--panel);
  border: 1px solid var(--line); border-radius: 6px; max-height: 36em; overflow: auto; }
pre.inline { font-family: inherit; font-size: inherit; background: none; border: 0; padding: 0; margin: 0;
  display: inline; max-height: none; }
pre.code { max-height: none; }
.muted { color: var(--muted); }
.warn { color: var(--run); }
.fail-text { color: var(--fail); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  color: #fff; background: var(--muted); white-space: nowrap; }
.badge.big { font-size: 16px; padding: 2px 12px; }
.badge.ok { background: var(--ok); } .badge.fail { background: var(--fail); }
.badge.running { background: var(--run); } .badge.go { background: var(--go); }
.badge.warn { background: var(--run); }
.outcome { font-size: 16px; margin: 6px 0 12px; }
table { border-collapse: collapse; }
table.facts th { text-align: left; vertical-align: top; padding: 3px 14px 3px 0; color: var(--muted);
  font-weight: 600; white-space: nowrap; }
table.facts td { padding: 3px 0; vertical-align: top; overflow-wrap: anywhere; }
table.timeline, table.transitions { width: 100%; font-size: 14px; }
table.timeline th, table.timeline td, table.transitions th, table.transitions td { text-align: left;
  padding: 3px 10px 3px 0; border-bottom: 1px solid var(--panel); vertical-align: top; }
table.timeline td.num { white-space: nowrap; font-variant-numeric: tabular-nums; }
table.timeline td.what { overflow-wrap: anywhere; }
table.timeline tr.totals td { font-weight: 600; border-top: 2px solid var(--line); }
table.transitions tr.sub td.agent { padding-left: 18px; }
table.transitions td.reason { overflow-wrap: anywhere; }
table.timeline tr.end td, table.transitions tr.end td { font-weight: 600; border-top: 2px solid var(--line); }
.bar { width: 90px; height: 5px; background: var(--panel); margin-top: 3px; }
.bar span { display: block; height: 5px; min-width: 1px; }
span.agent { font-weight: 600; }
.agent-0 { color: #0969da; } .bar .agent-0 { background: #0969da; }
.agent-1 { color: #8250df; } .bar .agent-1 { background: #8250df; }
.agent-2 { color: #1a7f37; } .bar .agent-2 { background: #1a7f37; }
.agent-3 { color: #bc4c00; } .bar .agent-3 { background: #bc4c00; }
.agent-4 { color: #bf3989; } .bar .agent-4 { background: #bf3989; }
.agent-5 { color: #57606a; } .bar .agent-5 { background: #57606a; }
.legend ul { list-style: none; padding: 0; margin: 6px 0; columns: 2; font-size: 13px; }
.legend li { margin: 2px 0; }
.swatch { display: inline-block; width: 14px; height: 10px; border: 3px solid; margin-right: 6px;
  vertical-align: middle; }
ol.plan, ul.memory { margin: 0; padding-left: 20px; }
ul.memory li.new { font-weight: 600; }
.pair { display: flex; gap: 10px; flex: 0 0 auto; align-items: flex-start; }
.panel { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 14px 0; }
.panel.failure { border-color: var(--fail); background: #fff5f5; }
.panel.failure h2 { margin-top: 0; }
.break { margin: 18px 0; padding: 10px 14px; border: 2px dashed var(--fail); border-radius: 8px;
  color: var(--fail); font-weight: 600; }
.break.running { border-color: var(--run); color: var(--run); }
.problems { color: var(--run); }
article.step { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 16px 0; }
article.step[data-status="FAIL"] { border-color: var(--fail); }
.cols { display: flex; gap: 18px; align-items: flex-start; }
.info { flex: 1; min-width: 0; }
figure.shot { margin: 0; flex: 0 0 auto; width: 300px; }
.pair.acted figure.shot { width: 240px; }
figure.shot a.full { display: block; cursor: zoom-in; }
figure.shot img { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; display: block; }
figure.shot .frame { position: relative; display: block; }
figure.shot svg.marks { position: absolute; left: 1px; top: 1px; width: calc(100% - 2px); height: calc(100% - 2px);
  pointer-events: none; }
figure.shot figcaption { font-size: 12px; color: var(--muted); margin-top: 4px; }
figure.final { width: 300px; }
.noimage { width: 100%; height: 120px; display: flex; align-items: center; justify-content: center;
  background: var(--panel); color: var(--muted); border-radius: 6px; }
.sections { margin-top: 10px; }
details { margin: 6px 0; }
details > summary { cursor: pointer; color: var(--go); font-weight: 600; }
details > :not(summary) { margin-top: 6px; }
.message { margin: 8px 0; }
.message .role { font-size: 12px; font-weight: 700; text-transform: uppercase; color: var(--muted); }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media (max-width: 760px) { .cols { flex-direction: column; } .legend ul { columns: 1; } }
"""
