"""CREATE TABLE's properties as Hudi reads them (hoodie.interfaces.sql_create), drawn by Hypothesis against a
model, without Spark: OPTIONS or TBLPROPERTIES, keys bare, dotted or quoted, Hudi's aliases in any letter case
and Hudi's own keys. The class of bug: dotted keys were read by their last part (``hoodie.table.type`` as
``type``), aliases only in one case, ``hoodie.table.name`` named the table."""

from __future__ import annotations

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodie.interfaces.sql_call import SqlError
from hoodie.interfaces.sql_create import statement_properties, table_config
from tests.helpers import examples

KEY_SPELLINGS = {
    "key": ["primaryKey", "hoodie.table.recordkey.fields", "hoodie.datasource.write.recordkey.field"],
    "ordering": ["preCombineField", "orderingFields", "hoodie.table.precombine.field", "hoodie.table.ordering.fields",
                 "hoodie.datasource.write.precombine.field"],
    "type": ["type", "hoodie.table.type", "hoodie.datasource.write.table.type"],
}
TYPE_VALUES = {"cow": "COPY_ON_WRITE", "COW": "COPY_ON_WRITE", "mor": "MERGE_ON_READ", "MERGE_ON_READ": "MERGE_ON_READ",
               "copy_on_write": "COPY_ON_WRITE"}
FILTERED = ["hoodie.table.name", "hoodie.database.name", "hoodie.datasource.write.operation"]
KEPT = ["hoodie.index.type", "hoodie.write.table.version", "hoodie.parquet.max.file.size"]


def _case(draw, word: str) -> str:
    """Hudi's SQL aliases match in any case; its hoodie.* keys are written in lower case."""
    if word.startswith("hoodie."):
        return word
    return "".join(c.upper() if draw(st.booleans()) else c.lower() for c in word)


@st.composite
def statements(draw):
    props: list[tuple[str, str]] = []
    want_key = want_ordering = None
    want_type = "COPY_ON_WRITE"
    if draw(st.booleans()):
        want_key = draw(st.sampled_from(["id", "id,name"]))
        props.append((_case(draw, draw(st.sampled_from(KEY_SPELLINGS["key"]))), want_key))
    if draw(st.booleans()):
        want_ordering = "ts"
        props.append((_case(draw, draw(st.sampled_from(KEY_SPELLINGS["ordering"]))), "ts"))
    if draw(st.booleans()):
        v = draw(st.sampled_from(sorted(TYPE_VALUES)))
        want_type = TYPE_VALUES[v]
        props.append((_case(draw, draw(st.sampled_from(KEY_SPELLINGS["type"]))), v))
    filtered = draw(st.lists(st.sampled_from(FILTERED), unique=True))
    props += [(k, "x") for k in filtered]
    kept = {k: str(draw(st.integers(1, 99))) for k in draw(st.lists(st.sampled_from(KEPT), unique=True))}
    props += list(kept.items())
    props = draw(st.permutations(props))
    quoted = draw(st.booleans())
    clause = draw(st.sampled_from(["tblproperties", "options", "TBLPROPERTIES", "OPTIONS"]))
    body = ", ".join(f"{repr(k) if quoted else k} = '{v}'" for k, v in props)
    text = f"create table t (id int, name string, ts long) using hudi {clause} ({body}) location '/tmp/x'"
    return text, (want_key, want_ordering, want_type, kept)


@settings(max_examples=examples(200), deadline=None)
@given(statements())
def test_create_table_properties_as_hudi_reads_them(case) -> None:
    text, (key, ordering, ttype, kept) = case
    props, location, partitioned, using = statement_properties(sqlglot.parse_one(text, read="spark"))
    assert (location, partitioned, using.lower()) == ("/tmp/x", [], "hudi")
    got_key, got_ordering, got_type, rest = table_config(props)
    assert (got_key, got_ordering, got_type) == (key, ordering, ttype), text
    assert rest == kept, text  # hoodie.table.name, hoodie.database.name and the operation are dropped


@pytest.mark.parametrize("props,match", [
    ({"type": "cow1"}, "'type' must be 'cow' or 'mor'"),
    ({"hoodie.table.type": "MERGE"}, "'type' must be 'cow' or 'mor'"),
    ({"type": "cow", "hoodie.compact.inline": "true"}, "Compaction is not supported on a CopyOnWrite table"),
])
def test_create_table_properties_refused(props: dict, match: str) -> None:
    with pytest.raises(SqlError, match=match):
        table_config(props)
