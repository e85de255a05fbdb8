"""Export every table of a result store, one file per table (DuckDB COPY).

Parquet keeps the column types; CSV is for spreadsheets. The store itself is not changed.
"""

from pathlib import Path

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
    from chainlab.store import Store

    out = out or store_path.with_name(f"{store_path.stem}-export")
    out.mkdir(parents=True, exist_ok=True)
    with Store.open(store_path, read_only=True) as st:
        return st.export(out, fmt)


def run(args) -> int:
    files = export(args.store, args.format, args.out)
    for f in files:
        print(f)
    return 0
