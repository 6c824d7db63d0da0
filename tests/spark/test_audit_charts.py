"""The audit's charts, drawn from small aggregates (no Spark, no broker): bins that suit
the run's length, a flow chart that shows a run of one bin, lateness marks as reported."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from rmqcompat.spark.charts import flow_bin_ms, flow_figure, lateness_marks

T0 = 1_900_000_000_000
_NO_MARKER = (None, "None", "none", "", " ", ",")  # "," is a one-pixel marker


@pytest.mark.parametrize(
    ("span_ms", "bin_ms"),
    [
        (0, 10),
        (5_000, 100),
        (60_000, 1_000),
        (5 * 3_600_000, 5 * 60_000),
        (24 * 3_600_000, 30 * 60_000),
        (30 * 86_400_000, 12 * 3_600_000),
        (90 * 86_400_000, 2 * 86_400_000),
    ],
)
def test_bins_follow_the_run_length(span_ms: int, bin_ms: int) -> None:
    assert flow_bin_ms(span_ms) == bin_ms
    assert span_ms / bin_ms <= 60


def test_a_5_second_run_gets_sub_second_bins_and_a_5_hour_run_minute_bins() -> None:
    assert flow_bin_ms(5_000) < 1_000
    assert 60_000 <= flow_bin_ms(5 * 3_600_000) < 3_600_000


@pytest.fixture
def figures() -> Iterator[list[Figure]]:
    drawn: list[Figure] = []
    yield drawn
    for fig in drawn:
        plt.close(fig)


def test_a_flow_of_one_bin_is_drawn_with_markers(figures: list[Figure]) -> None:
    figures.append(flow_figure([(T0, "PUBLISH", 5), (T0, "CONSUME", 7)], 100))
    lines = figures[0].axes[0].get_lines()
    assert sorted(line.get_label() for line in lines) == ["consume", "publish"]
    for line in lines:
        assert line.get_marker() not in _NO_MARKER
        assert line.get_linestyle() != "None" or line.get_markersize() > 1
        assert list(line.get_xdata()) == [0.05]  # the bin's middle, in seconds
    assert sorted(line.get_ydata()[0] for line in lines) == [5, 7]


def test_a_flow_of_many_bins_is_steps_up_to_the_last_bins_edge(figures: list[Figure]) -> None:
    flow = [(T0 + i * 100, "CONSUME", i + 1) for i in range(50)]
    figures.append(flow_figure(flow, 100))
    (line,) = figures[0].axes[0].get_lines()
    assert line.get_drawstyle() == "steps-post"
    assert line.get_xdata()[-1] == pytest.approx(5.0)  # 50 bins of 0.1 s, the last drawn
    assert list(line.get_ydata()[-2:]) == [50, 50]


@pytest.mark.parametrize(
    ("counts", "marks"),
    [
        ([(1, 1), (2, 1)], {"p50": 1, "p99": 2, "max": 2}),
        ([(2030, 1), (2000, 1), (2010, 1)], {"p50": 2010, "p99": 2030, "max": 2030}),
        ([(5, 99), (900, 1)], {"p50": 5, "p99": 5, "max": 900}),
    ],
)
def test_lateness_marks_follow_the_reports_rank_rule(
    counts: list[tuple[int, int]], marks: dict[str, int]
) -> None:
    # Spark's percentile_approx, exact on few values: the value of rank ceil(q * n)
    assert lateness_marks(counts) == marks
