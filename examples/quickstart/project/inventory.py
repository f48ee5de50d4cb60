"""A tiny inventory, used by mend's quickstart."""


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count):
        if count <= 0:
            raise ValueError("count must be positive")
        self.items[name] = self.items.get(name, 0) + count

    def remove(self, name, count):
        self.items[name] -= count

    def report(self):
        for name, count in sorted(self.items.items()):
            print(f"{name}: {count}")
