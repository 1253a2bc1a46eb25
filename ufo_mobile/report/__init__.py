"""The HTML report of a run: ``write_report(run_dir)`` writes ``run_dir/report.html``, one
self-contained page (screenshots and fonts embedded, no network, no script) showing the outcome,
the timeline of the steps, and every step with its screen before and after its action.

Modules: ``load`` (the run directory read back), ``images`` (screenshots with the action's target
or what changed drawn on them), ``diff`` (what changed between two screens), ``figures`` (a
step's before and after screens, the colours' legend), ``plans`` (the plan, memory and subgoals),
``timeline``, ``steps`` and ``page`` (the HTML), ``markup`` (escaping), ``style`` (CSS),
``webfonts`` (subset Noto faces), ``write`` (the file). It sits above ``ui`` (fonts) and ``trace``
(the run directory) in the layers, below ``session``, which writes it at the end of a run.
"""

from ufo_mobile.report.write import REPORT_NAME, render_report, write_report

__all__ = ["REPORT_NAME", "render_report", "write_report"]
