"""Export every table of a result store, one file per table (DuckDB COPY).

Parquet keeps the column types; CSV is for spreadsheets. The store itself is not changed.
"""

from pathlib import Path

from chainlab.errors import ChainlabError

HELP = "export a result store's tables to Parquet or CSV files"


def add_arguments(parser):
    parser.add_argument("store", type=Path, help="result store (DuckDB file)")
    parser.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    parser.add_argument(
        "--out",
        type=Path,
        help="output directory (default: <store stem>-export next to the store)",
    )


def export(store_path: Path, fmt: str, out: Path | None = None) -> list[Path]:
    # Deferred: the command line builds every subcommand's parser at start, and the store
    # (duckdb, pyarrow, pandas) is too heavy to load for `chainlab validate`.
    from chainlab.store import TABLES, Store

    out = out or store_path.with_name(f"{store_path.stem}-export")
    out.mkdir(parents=True, exist_ok=True)
    files = []
    with Store.open(store_path, read_only=True) as st:
        for t in TABLES:
            f = out / f"{t}.{fmt}"
            target = str(f).replace("'", "''")
            # HUGEINT is written as BIGINT so every reader (pandas, spreadsheets) gets integers.
            src = (
                "(SELECT * REPLACE (CAST(start_unix_ns AS BIGINT) AS start_unix_ns) FROM samples)"
                if t == "samples"
                else t
            )
            opts = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
            try:
                st.con.execute(f"COPY {src} TO '{target}' {opts}")
            except Exception as e:
                raise ChainlabError(f"cannot write {f}: {str(e).splitlines()[0]}") from None
            files.append(f)
    return files


def run(args) -> int:
    files = export(args.store, args.format, args.out)
    for f in files:
        print(f)
    return 0
