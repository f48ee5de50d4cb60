import os

def f(x):
    return x + 1

def g(y):
    return y * 2
