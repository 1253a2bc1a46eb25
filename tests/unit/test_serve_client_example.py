"""docs/serve.md quotes examples/serve_client.py: its code block is the file, less the file's docstring."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_quote_the_example_as_it_is() -> None:
    source = (ROOT / "examples" / "serve_client.py").read_text()
    code = source.split('"""\n', 1)[1].lstrip("\n")
    docs = (ROOT / "docs" / "serve.md").read_text()
    start = docs.index("```python\n", docs.index("`examples/serve_client.py` is this client")) + len("```python\n")
    assert docs[start:docs.index("```\n", start)] == code
    assert 'os.environ.get("UFO_MOBILE_SERVE_TOKEN")' in code  # unset: no header, not a KeyError
