export type Currency = "EUR" | "USD" | "GBP";

const DIGITS: Record<Currency, number> = { EUR: 2, USD: 2, GBP: 2 };

export function formatMoney(amount: number, currency: Currency, locale = "en-GB"): string {
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency,
    minimumFractionDigits: DIGITS[currency],
  }).format(amount);
}

export function sum(amounts: number[]): number {
  return amounts.reduce((a, b) => a + b, 0);
}
