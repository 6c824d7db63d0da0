import pytest

from rmqcompat.consumer.tag_filter import TagFilter


@pytest.mark.parametrize(
    ("expression", "tag", "expected"),
    [
        ("*", "A", True),
        ("*", None, True),
        (None, "A", True),
        ("A", "A", True),
        ("A", "B", False),
        ("A || B", "B", True),
        (" A ||B ", "A", True),
        ("A || B", "C", False),
        ("A || B", None, False),
    ],
)
def test_tag_expressions(expression, tag, expected):
    assert TagFilter.parse(expression).matches(tag) is expected
