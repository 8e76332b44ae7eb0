"""The speed targets' section of ``python -m benchmarks`` (``--targets``): its rows and its
table, on small sizes (times are reported, never asserted)."""
from benchmarks import targets


def test_rows_and_table():
    after = {"batch": targets.batch_rows(1, sizes=((5, 30),)),
             "single": targets.single_rows(calls=10, repeats=1, sizes=(20,)),
             "component": targets.component_rows(300),
             "cv": targets.cv_rows(names=("APSVMCV",), rows_used=300, repeats=1)}
    assert [r[2] for r in after["batch"]] == ["contiguous", "interleaved"]
    assert all(r[3] > 0 and r[5] > 0 for r in after["batch"])
    assert after["component"][0][:2] == (300, 3000)
    assert after["cv"][0][0] == "APSVMCV" and after["cv"][0][2] >= 2
    table = targets.format_targets(after)
    assert table.count("\n| infer_batch") == 2 and "| one infer call, n = 20" in table
    both = targets.format_targets(after, after)
    assert " -> " in both and both.count("\n|") == table.count("\n|")
