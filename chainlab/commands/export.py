"""Export every table of a result store, one file per table (DuckDB COPY).

Parquet keeps the column types; CSV is for spreadsheets. The store itself is not changed.
"""

from pathlib import Path

from chainlab.errors import ChainlabError

HELP = "export a result store's tables to Parquet or CSV files"


def add_arguments(parser):
    parser.add_argument("store", type=Path, help="result store (DuckDB file)")
    parser.add_argument(
        "--format",
        choices=["parquet", "csv"],
        default="parquet",
        help="file format: parquet keeps the column types, csv is for spreadsheets "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output directory (default: <store stem>-export next to the store)",
    )


def export(store_path: Path, fmt: str, out: Path | None = None) -> list[Path]:
    """Every table of the store into `out` (made if missing); nothing is left behind when
    the store cannot be read or a file cannot be written."""
    # Deferred: the command line builds every subcommand's parser at start, and the store
    # (duckdb, pyarrow, pandas) is too heavy to load for `chainlab validate`.
    from chainlab.store import Store

    out = out or store_path.with_name(f"{store_path.stem}-export")
    if out.exists() and not out.is_dir():
        raise ChainlabError(f"--out {out}: exists and is not a directory; allowed: a directory")
    with Store.open(store_path, read_only=True) as st:
        made = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ChainlabError(f"--out {out}: cannot make the directory ({e.strerror})") from None
        before = set(out.iterdir())
        try:
            return st.export(out, fmt)
        except ChainlabError:
            # Nothing half-written: the files of this export go, and the folder if it made it.
            for f in set(out.iterdir()) - before:
                f.unlink()
            if made:
                out.rmdir()
            raise


def run(args) -> int:
    files = export(args.store, args.format, args.out)
    for f in files:
        print(f)
    return 0
