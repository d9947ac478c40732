"""The base path of `hoodie demo` / `hoodie quickstart` (issue 12, item 3): generated folders of
unrelated files, user tables and the commands' own earlier output, under every overwrite mode.
Nothing hoodie did not create is ever deleted unless the user said --overwrite."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie.interfaces.quickstart import MARKER, BasePathError, claim_base_path
from tests.helpers import examples

NAMES = st.sampled_from(["notes.txt", "data", "day=2024-01-01", "day=x", ".hoodie", ".hidden", "sub", "day"])
TREES = st.lists(st.tuples(NAMES, st.sampled_from(["", "f.parquet", "hoodie.properties", "x/y.csv"])),
                 max_size=5)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=TREES, marker=st.sampled_from([None, "hoodie demo", "hoodie quickstart", "someone else"]),
       overwrite=st.sampled_from([None, True, False]), as_file=st.booleans())
def test_claim_never_deletes_what_hoodie_did_not_create(tmp_path_factory, tree: list[tuple[str, str]],
                                                        marker: Optional[str], overwrite: Optional[bool],
                                                        as_file: bool) -> None:
    root = tmp_path_factory.mktemp("claim") / "base"
    if as_file:
        root.write_text("a file, not a folder")
    else:
        root.mkdir()
        for top, rel in tree:
            path = root / top / rel if rel else root / top
            if rel:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"{top}/{rel}")
            elif not path.exists():
                path.mkdir(parents=True)
        if marker is not None:
            (root / MARKER).parent.mkdir(parents=True, exist_ok=True)
            (root / MARKER).write_text(json.dumps({"created_by": marker}))
    before = {} if as_file else _files(root)
    tops = set() if as_file else set(os.listdir(root))
    own = (marker in ("hoodie demo", "hoodie quickstart")
           and all(n == ".hoodie" or n.startswith("day=") for n in tops))
    try:
        claim = claim_base_path(str(root), "hoodie demo", overwrite)
    except BasePathError as e:
        # Refused: a file, or a non-empty folder that is not the command's own output, without --overwrite.
        assert as_file or (tops and not own and not overwrite), e
        assert "--overwrite" in str(e) or as_file
        assert as_file or _files(root) == before  # the refusal changed nothing
        return
    assert not as_file
    assert not tops or overwrite or own
    claim.prepare()
    after = _files(root)
    assert json.loads(after.pop(MARKER))["created_by"] in ("hoodie demo", "hoodie quickstart")
    before.pop(MARKER, None)
    if claim.replace:
        assert overwrite or own
        assert after == {}
    else:
        assert after == before  # kept (--no-overwrite on its own table, or an empty folder)
