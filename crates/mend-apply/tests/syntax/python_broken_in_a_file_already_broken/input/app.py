def broken(:
    pass


def g(y):
    return y * 2
