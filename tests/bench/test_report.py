"""`chainlab bench report` on a small store: it builds the store, runs the report as a child
process and prints wall time and peak memory."""

import pytest

from chainlab.bench import report as bench


def test_bench_report_prints_time_and_memory(tmp_path, capsys):
    assert bench.main(["--samples", "3000", "--scenarios", "1", "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "store: 3,000 synthetic measured handshakes, 1 scenario(s)" in out
    line = next(x for x in out.splitlines() if x.startswith("chainlab report run 1"))
    wall = float(line.split("wall time ")[1].split(" s")[0])
    mib = float(line.split("peak memory ")[1].split(" MiB")[0])
    # The report process's own peak: above what its libraries alone take, far below a GiB
    # for 3,000 samples. Its wall time is the benchmark's figure, not this test's.
    assert wall > 0 and 50 < mib < 4096
    assert (tmp_path / "bench-report-report" / "index.html").is_file()


@pytest.mark.bad_input
def test_bench_report_rejects_bad_options(capsys):
    import pytest

    with pytest.raises(SystemExit):
        bench.main(["--scenarios", "16"])
    assert "--scenarios 16: allowed: 1..15" in capsys.readouterr().err
