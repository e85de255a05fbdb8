"""The report folder: created beside the store, earlier reports replaced, nothing else touched."""

import pytest

from chainlab.errors import ChainlabError
from chainlab.report import default_out_dir, prepare_out_dir


def test_default_folder_is_beside_the_store(tmp_path):
    assert default_out_dir(tmp_path / "results" / "sp.duckdb") == tmp_path / "results" / "sp-report"


def test_earlier_report_files_are_cleared_and_others_kept(tmp_path):
    out = tmp_path / "r"
    (out / "tables").mkdir(parents=True)
    (out / "figures").mkdir()
    (out / "index.html").write_text("old")
    (out / "tables" / "stale.csv").write_text("x")
    (out / "figures" / "stale.svg").write_text("x")
    (out / "figures" / "keep.txt").write_text("x")
    prepare_out_dir(out)
    assert not (out / "tables" / "stale.csv").exists()
    assert not (out / "figures" / "stale.svg").exists()
    assert (out / "figures" / "keep.txt").exists()


@pytest.mark.bad_input
def test_a_file_or_a_foreign_folder_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ChainlabError, match="is not a folder"):
        prepare_out_dir(f)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("x")
    with pytest.raises(ChainlabError, match="holds no chainlab report"):
        prepare_out_dir(tmp_path / "d")
    prepare_out_dir(tmp_path / "new")
    assert (tmp_path / "new" / "tables").is_dir()
