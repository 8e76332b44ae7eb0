"""python -m benchmarks.latent_spread: one-row bags with far scores against AP's optimum."""
from benchmarks import latent_spread


def test_a_few_cases_reach_ap_and_print_the_table(tmp_path, capsys):
    out = tmp_path / "spread.md"
    status = latent_spread.main(["--cases", "12", "--max-p", "40", "--max-n", "200", "--exact",
                                 "--out", str(out)])
    text = out.read_text()
    assert status == 0, text
    assert "12 cases, 0 outside 1e-12 of AP's optimum" in text
    assert "| spread | cases | largest P | largest N | below AP's optimum |" in text
    assert capsys.readouterr().out.strip() == text.strip()
