"""What UFO's MobileAgent would send to its model for one screen, read from a UFO checkout at run time.

Nothing of UFO is copied here: given a clone of microsoft/UFO (a work tree or a bare git directory),
this module reads its prompt templates (``ufo/prompts/third_party/mobile_agent*.yaml``) and the
action tools of its mobile MCP server (``ufo/client/mcp/http_servers/mobile_mcp_server.py``, parsed
with ``ast``) and fills them the way its prompter does (``ufo/prompter/customized/
mobile_agent_prompter.py``): the system prompt with the tool list and the examples, the user text
with ``json.dumps`` of the plan, the installed apps, the controls and the last actions, and two
full-size PNGs (clean and annotated). Its control list is rebuilt from the same uiautomator dump with
UFO's own rule (every node that is clickable, long-clickable, checkable or scrollable, has a name, or
is an Edit/Button, with bounds; ids in document order).

Approximations, stated in the bench's output: the tool list is rendered one block per tool (name,
description, parameters) rather than by UFO's ``tool_to_llm_prompt``, and the blackboard UFO prepends
(its trajectory so far) is the previous replies as JSON.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from lxml import etree

PROMPT = "ufo/prompts/third_party/mobile_agent.yaml"
EXAMPLES = "ufo/prompts/third_party/mobile_agent_example.yaml"
SERVER = "ufo/client/mcp/http_servers/mobile_mcp_server.py"
_BOUNDS = re.compile(r"\[(\d+),(\d+)\]\[(\d+),(\d+)\]")


def _read(repo: Path, path: str) -> str:
    if (repo / path).is_file():
        return (repo / path).read_text(encoding="utf-8")
    out = subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        raise FileNotFoundError(f"{path} not found in {repo}: {out.stderr.strip()}")
    return out.stdout


def _action_tools(source: str) -> list[str]:
    """One block per tool of UFO's mobile action server: name, docstring, parameters."""
    tree = ast.parse(source)
    server = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                  and n.name == "create_mobile_action_server")
    blocks = []
    for node in ast.walk(server):
        if not isinstance(node, ast.AsyncFunctionDef) or not node.decorator_list:
            continue
        params = [f"- {arg.arg}: {ast.unparse(arg.annotation) if arg.annotation else 'Any'}" for arg in node.args.args]
        blocks.append(f"Tool: {node.name}\nDescription: {ast.get_docstring(node) or ''}\nParameters:\n"
                      + "\n".join(params))
    return blocks


@dataclass
class UfoPrompter:
    system_template: str
    user_template: str
    examples: list[dict[str, Any]]
    apis: str

    @classmethod
    def from_repo(cls, repo: Path) -> UfoPrompter:
        prompt = yaml.safe_load(_read(repo, PROMPT))
        examples = yaml.safe_load(_read(repo, EXAMPLES))
        tools = _action_tools(_read(repo, SERVER))
        return cls(prompt["system"], prompt["user"], [v for k, v in examples.items() if k.startswith("example")],
                   "\n\n---\n\n".join(tools))

    def system(self) -> str:
        rendered = [f"Example {i}:\n[User Request]:\n    {e.get('Request')}\n[Response]:\n    "
                    f"{json.dumps(e.get('Response'))}" for i, e in enumerate(self.examples, 1)]
        return self.system_template.format(apis=self.apis, examples="## Response Examples\n" + "\n".join(rendered))

    def user(self, *, request: str, plan: list[str], apps: list[dict[str, str]], controls: list[dict[str, Any]],
             last_actions: list[dict[str, Any]], blackboard: list[dict[str, Any]]) -> str:
        text = self.user_template.format(prev_plan=json.dumps(plan), user_request=request,
                                         installed_apps=json.dumps(apps), current_controls=json.dumps(controls),
                                         retrieved_docs="", last_success_actions=json.dumps(last_actions))
        return (json.dumps(blackboard) + "\n" if blackboard else "") + text


def ufo_controls(xml: str) -> list[dict[str, Any]]:
    """The controls UFO's mobile server reports for a dump (its filter, its fields)."""
    root = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(recover=True, huge_tree=False))
    out: list[dict[str, Any]] = []
    for node in root.iter("node"):
        match = _BOUNDS.fullmatch(node.get("bounds", ""))
        if match is None:
            continue
        x1, y1, x2, y2 = (int(v) for v in match.groups())
        if x2 < x1 or y2 < y1 or x2 <= 0 or y2 <= 0:
            continue
        name = node.get("text") or node.get("content-desc") or ""
        kind = node.get("class", "").split(".")[-1]
        flags = any(node.get(f) == "true" for f in ("clickable", "long-clickable", "checkable", "scrollable"))
        if flags or name or "Edit" in kind or "Button" in kind:
            out.append({"id": str(len(out) + 1), "name": name or kind, "type": kind, "rect": [x1, y1, x2, y2]})
    return out


def ufo_apps(packages: list[str]) -> list[dict[str, str]]:
    return [{"id": str(i + 1), "name": p, "type": p} for i, p in enumerate(packages)]
