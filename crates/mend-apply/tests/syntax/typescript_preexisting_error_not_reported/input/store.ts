export interface Item {
  id: number;
  name: string;
}

export class Store {
  private items: Map<number, Item> = new Map();

  add(item: Item): void {
    this.items.set(item.id, item;
  }

  get(id: number): Item | undefined {
    return this.items.get(id);
  }
}
