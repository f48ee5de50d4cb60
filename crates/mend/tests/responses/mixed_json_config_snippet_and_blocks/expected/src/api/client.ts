/**
 * A small typed client for the fleet API.
 *
 * Every request carries the session token, retries idempotent calls on
 * network errors and 502/503/504, and turns error bodies into ApiError.
 */

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface ClientOptions {
  baseUrl: string;
  token?: () => string | null;
  fetch?: typeof fetch;
  retries?: number;
  timeoutMs?: number;
}

export interface Vehicle {
  id: string;
  name: string;
  status: "active" | "maintenance" | "retired";
  odometerKm: number;
  lastSeenAt: string | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }

  get retryable(): boolean {
    return this.status === 502 || this.status === 503 || this.status === 504;
  }
}

const IDEMPOTENT: ReadonlySet<Method> = new Set(["GET", "PUT", "DELETE"]);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function backoff(attempt: number): number {
  const base = 250 * 2 ** attempt;
  return base + Math.floor(Math.random() * base * 0.2);
}

export class FleetClient {
  private readonly baseUrl: string;
  private readonly token: () => string | null;
  private readonly fetchImpl: typeof fetch;
  private readonly retries: number;
  private readonly timeoutMs: number;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token ?? (() => null);
    this.fetchImpl = options.fetch ?? fetch;
    this.retries = Math.max(0, options.retries ?? 2);
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const attempts = IDEMPOTENT.has(method) ? this.retries + 1 : 1;
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        return await this.once<T>(method, path, body);
      } catch (err) {
        lastError = err;
        const retryable = err instanceof ApiError ? err.retryable : err instanceof TypeError;
        if (!retryable || attempt === attempts - 1) {
          throw err;
        }
        await sleep(backoff(attempt));
      }
    }
    throw lastError ?? new Error(`${method} ${path} failed`);
  }

  private async once<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    const headers: Record<string, string> = { Accept: "application/json" };
    const token = this.token();
    if (token) {
      headers.Authorization = `Bearer ${token}`;
    }
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
    }
    try {
      const res = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal,
      });
      if (res.status === 204) {
        return undefined as T;
      }
      const data = await res.json().catch(() => null);
      if (!res.ok) {
        throw new ApiError(
          res.status,
          data?.code ?? "unknown",
          data?.message ?? `${method} ${path} failed with ${res.status}`,
        );
      }
      return data as T;
    } finally {
      clearTimeout(timer);
    }
  }

  listVehicles(cursor?: string): Promise<Page<Vehicle>> {
    const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
    return this.request("GET", `/vehicles${query}`);
  }

  async *allVehicles(): AsyncGenerator<Vehicle> {
    let cursor: string | undefined;
    do {
      const page = await this.listVehicles(cursor);
      yield* page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  getVehicle(id: string): Promise<Vehicle> {
    return this.request("GET", `/vehicles/${encodeURIComponent(id)}`);
  }

  updateVehicle(id: string, patch: Partial<Pick<Vehicle, "name" | "status">>): Promise<Vehicle> {
    return this.request("PATCH", `/vehicles/${encodeURIComponent(id)}`, patch);
  }

  retireVehicle(id: string): Promise<void> {
    return this.request("DELETE", `/vehicles/${encodeURIComponent(id)}`);
  }
}
