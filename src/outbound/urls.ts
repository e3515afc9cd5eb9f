/**
 * Merchant URLs (`callback_url`, `redirect_url`) are stored and used in their WHATWG-normalised form
 * (`URL.href`: punycode host, percent-encoded path, backslashes read as slashes), so whatever was
 * accepted can go out as a `Location` header or a request line unchanged (docs/integration.md §2).
 * The request hash keeps the URL as the merchant sent it: a repeat is the same request only if it
 * is spelled the same.
 */
export function normalUrl(url: string): string;
export function normalUrl(url: string | null | undefined): string | null;
export function normalUrl(url: string | null | undefined): string | null {
  return url == null ? null : new URL(url).href;
}
