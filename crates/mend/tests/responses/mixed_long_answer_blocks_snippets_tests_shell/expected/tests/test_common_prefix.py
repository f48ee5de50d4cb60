from src.urlpath import common_prefix, depth


def test_common_prefix_ignores_trailing_slashes():
    assert common_prefix(["/a/", "/a/"]) == "/a"
    assert common_prefix(["/a/", "/a/b"]) == "/a"


def test_common_prefix_of_the_root():
    assert common_prefix(["/", "/a"]) == "/"


def test_depth_of_empty_and_dot():
    assert depth("") == 0
    assert depth(".") == 0
