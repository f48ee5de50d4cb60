import { z } from "zod";

export const OrderSchema = z.object({
  id: z.string(),
  customerId: z.string(),
  total: z.number().nonnegative(),
  currency: z.enum(["EUR", "USD", "GBP"]),
  placedAt: z.coerce.date(),
});

export type Order = z.infer<typeof OrderSchema>;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly body: string,
  ) {
    super(`HTTP ${status} for ${url}`);
    this.name = "HttpError";
  }
}

export interface ShopClientOptions {
  baseUrl: string;
  apiKey?: string;
  locale?: string;
  timeoutMs?: number;
}

export class ShopClient {
  private readonly baseUrl: string;
  private readonly apiKey?: string;
  private readonly locale: string;
  private readonly timeoutMs: number;

  constructor(options: ShopClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.locale = options.locale ?? "en-GB";
    this.timeoutMs = options.timeoutMs ?? 8_000;
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = {
      Accept: "application/json",
      "Accept-Language": this.locale,
    };
    if (this.apiKey) {
      headers["X-Api-Key"] = this.apiKey;
    }
    return headers;
  }

  private async get<T>(path: string): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      const url = `${this.baseUrl}${path}`;
      const res = await fetch(url, { headers: this.headers(), signal: controller.signal });
      if (!res.ok) {
        throw new HttpError(res.status, url, await res.text());
      }
      return (await res.json()) as T;
    } finally {
      clearTimeout(timer);
    }
  }

  async order(id: string): Promise<Order> {
    const data = await this.get<unknown>(`/orders/${id}`);
    return OrderSchema.parse(data);
  }

  async ordersFor(customerId: string, page = 1): Promise<Order[]> {
    const data = await this.get<unknown[]>(`/customers/${customerId}/orders?page=${page}`);
    return data.map((d) => OrderSchema.parse(d));
  }

  async totalSpent(customerId: string): Promise<number> {
    let total = 0;
    for (let page = 1; ; page++) {
      const orders = await this.ordersFor(customerId, page);
      if (orders.length === 0) {
        return total;
      }
      total += orders.reduce((sum, o) => sum + o.total, 0);
    }
  }
}
