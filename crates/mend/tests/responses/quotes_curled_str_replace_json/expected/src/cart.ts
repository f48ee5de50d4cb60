import { Money, add, multiply, zero } from "./money";
import type { Product } from "./catalog";

export interface CartLine {
  product: Product;
  quantity: number;
}

export interface Discount {
  code: string;
  percent: number;
  minimumSubtotal?: Money;
}

export class CartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CartError";
    Object.defineProperty(this, "code", { value: "CART_ERROR" });
  }
}

const MAX_QUANTITY = 99;

export class Cart {
  private lines: Map<string, CartLine> = new Map();
  private discount: Discount | null = null;

  constructor(private readonly currency: string) {}

  get isEmpty(): boolean {
    return this.lines.size === 0;
  }

  items(): CartLine[] {
    return [...this.lines.values()];
  }

  add(product: Product, quantity = 1): void {
    if (product.currency !== this.currency) {
      throw new CartError(`cannot mix ${product.currency} and ${this.currency}`);
    }
    const existing = this.lines.get(product.id);
    const next = (existing?.quantity ?? 0) + quantity;
    if (next > MAX_QUANTITY) {
      throw new CartError(`at most ${MAX_QUANTITY} of one product`);
    }
    this.lines.set(product.id, { product, quantity: next });
  }

  remove(productId: string): void {
    this.lines.delete(productId);
  }

  setQuantity(productId: string, quantity: number): void {
    const line = this.lines.get(productId);
    if (!line) {
      throw new CartError(`no line for product ${productId}`);
    }
    if (quantity <= 0) {
      this.lines.delete(productId);
      return;
    }
    line.quantity = Math.min(quantity, MAX_QUANTITY);
  }

  applyDiscount(discount: Discount): void {
    const subtotal = this.subtotal();
    if (discount.minimumSubtotal && subtotal.cents < discount.minimumSubtotal.cents) {
      throw new CartError(`code ${discount.code} needs a larger order`);
    }
    this.discount = discount;
  }

  subtotal(): Money {
    let total = zero(this.currency);
    for (const line of this.lines.values()) {
      total = add(total, multiply(line.product.price, line.quantity));
    }
    return total;
  }

  discountAmount(): Money {
    if (!this.discount) {
      return zero(this.currency);
    }
    const cents = Math.round((this.subtotal().cents * this.discount.percent) / 100);
    return { cents, currency: this.currency };
  }

  total(): Money {
    const subtotal = this.subtotal();
    const discount = this.discountAmount();
    return { cents: subtotal.cents - discount.cents, currency: this.currency };
  }

  toJSON() {
    return {
      currency: this.currency,
      lines: this.items().map((line) => ({
        productId: line.product.id,
        quantity: line.quantity,
      })),
      discount: this.discount?.code ?? null,
      total: this.total().cents,
    };
  }
}

export function restoreCart(
  data: ReturnType<Cart["toJSON"]>,
  lookup: (id: string) => Product | undefined,
): Cart {
  const cart = new Cart(data.currency);
  for (const line of data.lines) {
    const product = lookup(line.productId);
    if (product) {
      cart.add(product, line.quantity);
    }
  }
  return cart;
}
