from .inventory import Inventory, Item, StockError

__all__ = ["Inventory", "Item", "StockError"]
