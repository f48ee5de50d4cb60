import pytest

from src.urlpath import is_safe_relative


@pytest.mark.parametrize(
    "path, safe",
    [
        ("a/b", True),
        ("a/../b", True),
        ("../b", False),
        ("/etc/passwd", False),
        ("a\\b", False),
        ("a\x00b", False),
    ],
)
def test_is_safe_relative(path, safe):
    assert is_safe_relative(path) is safe
