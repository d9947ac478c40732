"""Generate the reference docs from the code's own definitions, so they cannot drift:

* ``docs/configuration.md`` from :mod:`hoodie.configs` (every key, default, meaning);
* ``docs/cli.md`` from the ``hoodie`` argument parser;
* ``docs/sql.md`` from the registered CALL procedures and the statements of :mod:`hoodie.interfaces.sql_dml`.

    python -m hoodie.interfaces.docgen          # rewrite the three files
    python -m hoodie.interfaces.docgen --check  # exit 1 if any is out of date (the test does this)
"""

from __future__ import annotations

import argparse
import io
import sys
from contextlib import redirect_stdout
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def configuration_md() -> str:
    """The configuration reference, built from the typed definitions in :mod:`hoodie.configs`."""
    from hoodie.configs import all_configs

    lines = ["# Configuration reference", "",
             "Generated from the typed definitions in `hoodie.configs` by `python -m hoodie.interfaces.docgen`;",
             "do not edit by hand. Keys are Hudi's own wherever Hudi has one. Pass them as Spark write options,",
             "`--set KEY=VALUE` on the CLI, or `options => 'k=v,...'` in CALL procedures.", "",
             "Every value is parsed by the rule of its type, the same for every key (services and the CLI alike);",
             "a value the rule refuses is an error naming the key, the value and what is accepted:", "",
             "- Values are stripped of surrounding whitespace; an empty value means unset (the default applies).",
             "- **boolean**: `true` or `false`, in any case. Anything else (`1`, `0`, `yes`, `no`) is refused: Hudi's",
             "  Java reads every value but `true` as false, so `yes` would silently mean false.",
             "- **int** / **long**: decimal digits with an optional sign, within Java's int / long range (as Hudi",
             "  reads the key) and the bounds shown; no fractions, exponents, underscores or units (`120MB`).",
             "- **number**: a finite decimal number within the bounds shown.",
             "- **enum**: one of the values listed, in any case.",
             "- **duration**: ISO-8601 (`P7D`, `PT36H`, `P1DT12H`, `P2W`) or a number of days (`30`, `1.5`).",
             "- **list**: comma-separated; items are stripped and empty items dropped.",
             "- **string**: any text.", "",
             "A key may have aliases (older Hudi spellings): a value under an alias counts for the key; the key",
             "and an alias set to different values is an error.", "",
             "A table's `hoodie.properties` is read by the same rules when the table is opened (a value the rule",
             "refuses is an error naming the key and the file). The keys under *table properties* describe the",
             "table only and are not options: the write options above set them when a table is created.", ""]
    group = None
    for c in all_configs():
        if c.group != group:
            group = c.group
            lines += ["", f"## {group}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        key = f"`{c.key}`" + (" (also " + ", ".join(f"`{a}`" for a in c.aliases) + ")" if c.aliases else "")
        default = "" if c.default_text is None else f"`{c.default_text}`"
        lines.append(f"| {key} | {_cell(c.type.describe())} | {_cell(default)} | {_cell(c.doc)} |")
    return "\n".join(lines) + "\n"


def _help_of(parser: argparse.ArgumentParser) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        parser.print_help()
    return buf.getvalue().rstrip()


def cli_md() -> str:
    """The CLI reference: every command's --help."""
    import os

    from hoodie.interfaces.cli import build_parser

    os.environ["COLUMNS"] = "100"  # stable wrapping
    parser = build_parser()
    lines = ["# CLI reference", "",
             "Generated from the `hoodie` argument parser by `python -m hoodie.interfaces.docgen`.",
             "Every command that prints data takes `--json`; errors print one line and exit with code 2;",
             "metadata commands (show, ttl, clean, compaction schedule/show, rollback) start no JVM.",
             "At a terminal, long pure-Python work (compaction, TTL's move and bring-back, building or",
             "validating the metadata table) shows a progress bar on standard error (`hoodie.progress`), Spark",
             "jobs Spark's own; piped or logged runs show none.", "",
             "```", _help_of(parser), "```"]

    def walk(p: argparse.ArgumentParser, prefix: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in sorted(action.choices.items()):
                    lines.extend(["", f"## `{prefix} {name}`", "", "```", _help_of(sub), "```"])
                    walk(sub, f"{prefix} {name}")

    walk(parser, "hoodie")
    return "\n".join(lines) + "\n"


def sql_md() -> str:
    """The SQL CALL reference."""
    from hoodie.interfaces.sql import PROCEDURES  # importing hoodie.sql registers every procedure

    lines = ["# SQL reference", "",
             "Generated from the registered procedures by `python -m hoodie.interfaces.docgen`.",
             "`hoodie.sql(spark, text)` runs `CALL name(arg => value, ...)` (named or positional arguments,",
             "SQL literals; positional ones in the order below, which is Hudi's for Hudi's procedures) and",
             "passes any other statement to `spark.sql`. Every call returns a DataFrame. One rule for every",
             "procedure's table: `table => 'name'` is a table in the current database and `table => 'db.name'`",
             "one in `db`, looked up in the catalog (the object must carry the table property",
             "`hoodie.base.path`; a session view of the same name, such as `hoodie.catalog.attach` makes, does",
             "not hide it); a `table` value with a `/` is a base path, and so is `basePath => '/path'`. Given",
             "both `table` and `basePath`, they must name the same table. String literals are `'...'` or",
             "`\"...\"`. Every procedure also takes Hudi 1.x's `filter => \"<predicate>\"`: only the output rows",
             "the predicate (over the output columns) keeps, e.g.",
             "`CALL show_commits(table => 'events', filter => \"commit_time > '20240501000000000'\")`.",
             "",
             "`CREATE TABLE [IF NOT EXISTS] name USING hoodie LOCATION '/path'` (or `USING hudi`) registers an",
             "existing table as `name` and `name_ro` (see",
             "[user-guide.md](user-guide.md#catalog-naming-tables-in-sql)).",
             "",
             "Procedures that act (`run_*`, `create_*`, `delete_*`, `rollback_*`) return a row saying what they",
             "did or why they did nothing: a refusal is a row with a false result and the reason in `message`",
             "(nothing was written). Procedures that show return a row per item and, where an empty result could",
             "mean several things, one row whose `note` says why there is none.",
             "",
             "The examples run as written (a test executes each) with a hoodie table at `/data/events`",
             "registered as `analytics.events`, partitioned by `productid` (merge-on-read, written at",
             "`20240430000000000` and `20240501000000000`, with a savepoint at `20240430000000000`), and",
             "`analytics` the current database.", "",
             "Hudi's own Spark SQL suite is replayed through `hoodie.sql`: [hudi-sql-suite.md](hudi-sql-suite.md)",
             "counts what is replayed and why the rest is not."]
    from hoodie.interfaces import sql_dml

    # The statements hoodie.sql runs on hoodie tables, from the module that runs them.
    lines += ["", "## Statements (DDL and DML on hoodie tables)", "", *_unindent(sql_dml.__doc__ or "")]
    from hoodie.interfaces import sql_ddl
    from hoodie.interfaces.procedures_unsupported import UNSUPPORTED

    lines += ["", "## Catalog DDL", "", *_unindent(sql_ddl.__doc__ or "")]
    lines += ["", "## Hudi's SQL forms", "",
              "* `SET key = 'value'` (or `\"value\"`) sets the value without its quotes, as Hudi's docs mean it",
              "  (`SET hoodie.spark.sql.insert.into.operation = 'bulk_insert'`); unquoted values go to Spark as written.",
              "* `SELECT ... FROM hudi_table_changes('t' | '/path', 'latest_state', 'begin' | 'earliest'[, 'end'])`:",
              "  the incremental read after `begin` (exclusive) up to `end` (inclusive); `'cdc'` is refused (hoodie",
              "  writes no change-data logs).",
              "* `TIMESTAMP AS OF` and `as.of.instant` take `yyyyMMddHHmmss[SSS]`, `yyyy-MM-dd HH:mm:ss[.SSS]` and",
              "  `yyyy-MM-dd` (that day's 00:00:00), as Hudi's `formatQueryInstant`.",
              "* `CALL system.<name>(...)` is `CALL <name>(...)`; `CALL help()` lists the procedures and",
              "  `CALL help(cmd => 'name')` shows one's parameters and output columns in Hudi's layout.",
              "* Procedures that read metadata build their rows in the driver from Arrow: they start no Spark job.",
              "", "## Hudi procedures hoodie does not have", "",
              "`CALL` of one of these is refused before anything is read or written, with what to use instead:", "",
              "| Hudi procedure | instead |", "|---|---|"]
    lines += [f"| `{name}` | {_cell(UNSUPPORTED[name])} |" for name in sorted(UNSUPPORTED)]
    for proc in sorted({id(p): p for p in PROCEDURES.values()}.values(), key=lambda p: p.name.lower()):
        lines += ["", f"## `{proc.name}`", "", proc.doc, "", "| argument | type | default |", "|---|---|---|"]
        for prm in proc.params:
            names = ", ".join([prm.name, *prm.aliases])
            default = "required" if prm.required else ("" if prm.default is None else f"`{prm.default}`")
            lines.append(f"| `{names}` | {prm.type.__name__} | {default} |")
        lines += ["", f"Output columns: `{proc.output}`"]
        if proc.examples:
            lines += ["", "```sql", *proc.examples, "```"]
    return "\n".join(lines) + "\n"


def _unindent(doc: str) -> list[str]:
    """A module docstring as Markdown lines (reST double backquotes become single ones)."""
    import textwrap

    return textwrap.dedent(doc).replace("``", "`").strip().splitlines()


GENERATED = {"configuration.md": configuration_md, "cli.md": cli_md, "sql.md": sql_md}


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, verify) the generated docs."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    stale = []
    for name, fn in GENERATED.items():
        text = fn()
        path = DOCS / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print(f"out of date: {', '.join(stale)}; run python -m hoodie.interfaces.docgen", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
