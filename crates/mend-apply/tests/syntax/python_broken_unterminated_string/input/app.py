import os


def load(path):
    with open(path) as f:
        data = f.read()
    return data.split("\n")


def main():
    for line in load(os.environ["FILE"]):
        if line:
            print(line)
