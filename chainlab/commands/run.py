"""Run a campaign file into a result store.

Per scenario: the hierarchy (generated once, then cached), an engine server and measuring
client batches as separate processes, warm-up handshakes recorded as warm-up, then fixed or
adaptive sampling. Each scenario is committed to the store in one transaction when it ends,
with the others that ended within the same second (chainlab.runner.window); Ctrl-C loses at
most the scenario in flight and `--resume` continues where a run stopped.
"""

import sys
from pathlib import Path

from chainlab.commands import read_campaign
from chainlab.errors import (
    EXIT_INTERRUPTED,
    EXIT_NONE_COMPLETED,
    EXIT_OK,
    EXIT_SOME_FAILED,
    one_line,
)

HELP = "run a campaign file into a result store (DuckDB)"


def add_arguments(parser):
    parser.add_argument("file", help="campaign file (TOML)")
    parser.add_argument(
        "--store",
        type=Path,
        help="result store to write (default: results/<file stem>.duckdb; missing parent "
        "directories are created)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an existing store, skipping scenarios it holds as completed",
    )
    parser.add_argument(
        "--campaign",
        action="append",
        metavar="NAME",
        help="only these campaigns of the file (repeatable; default: all)",
    )
    parser.add_argument("--seed", type=int, help="PKI and order seed (default: the file's)")
    parser.add_argument(
        "--cluster",
        metavar="tcp://HOST:8786",
        help="run the scenarios on the workers of this Dask scheduler (default: the file's "
        "[cluster] address, else this machine)",
    )
    parser.add_argument(
        "--placement",
        choices=["whole", "split"],
        help="on a cluster: a scenario whole on one worker host, or its server and client "
        "split over two (default: the file's [cluster] placement, else whole)",
    )
    parser.add_argument(
        "--order",
        choices=["random", "interleaved", "declared"],
        help="scenario order (default: the file's campaign.order)",
    )


def run(args) -> int:
    campaign = read_campaign(args.file)  # validation first: a bad file stops here, nothing written
    # Deferred: the runner loads the store (duckdb, pyarrow, pandas); the command line builds
    # every subcommand's parser at start and must stay quick for `chainlab validate`.
    from chainlab.runner.campaign import RunOptions
    from chainlab.runner.campaign import run as run_campaign

    store = args.store or Path("results") / f"{Path(args.file).stem}.duckdb"
    summary = run_campaign(
        campaign,
        RunOptions(
            store=store,
            resume=args.resume,
            campaigns=args.campaign,
            seed=args.seed,
            order=args.order,
            cluster=args.cluster or campaign.cluster,
            placement=args.placement or campaign.placement,
        ),
    )
    return run_status(summary)


# Failed scenarios named one by one after a run, at most this many (the report lists all).
SHOWN_FAILURES = 10


def run_status(summary) -> int:
    """The exit status of a finished run (README, "Exit status"), after a line per failed
    scenario saying why: 0 every scenario completed, 3 some failed, 4 none completed (the
    store keeps what ran either way), 130 interrupted."""
    if summary.interrupted:
        return EXIT_INTERRUPTED
    failed = summary.failed
    if not failed:
        return EXIT_OK
    for sid in failed[:SHOWN_FAILURES]:
        why = summary.failures.get(sid, "failed")
        print(f"chainlab: failed: {sid}: {one_line(why)}", file=sys.stderr)
    if len(failed) > SHOWN_FAILURES:
        print(
            f"chainlab: failed: {len(failed) - SHOWN_FAILURES} more; `chainlab report "
            f"{summary.store}` lists every one",
            file=sys.stderr,
        )
    if summary.completed:
        print(
            f"chainlab: {len(failed)} of {len(failed) + len(summary.completed)} scenarios "
            f"failed (exit status {EXIT_SOME_FAILED}); the store keeps the rest",
            file=sys.stderr,
        )
        return EXIT_SOME_FAILED
    print(
        f"chainlab: no scenario completed (exit status {EXIT_NONE_COMPLETED}); the store "
        "keeps what was recorded",
        file=sys.stderr,
    )
    return EXIT_NONE_COMPLETED
