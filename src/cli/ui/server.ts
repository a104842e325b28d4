import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The viewer's HTTP server, its guards in front of every route:
 * - it listens on 127.0.0.1 only;
 * - GET only: any other method is 405 (nothing here changes anything);
 * - every request carries the token (query `token`), compared in constant time, else 403 —
 *   the token is the only secret, printed once on stdout in the page's URL;
 * - every response has the strict CSP (nothing external, no inline script or style), nosniff,
 *   no referrer (the URL holds the token) and no caching.
 */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void> | void;

/** A fresh token: 32 random bytes, base64url (URL- and HTML-safe as it is). */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Constant time whatever the given value: both sides hashed to the same length first. */
export function tokenMatches(given: string | null, token: string): boolean {
  const a = crypto.createHash('sha256').update(given ?? '').digest();
  const b = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(a, b) && given !== null;
}

export function securityHeaders(res: http.ServerResponse): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
}

export function sendText(res: http.ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.end(text);
}

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  sendText(res, status, JSON.stringify(value), 'application/json; charset=utf-8');
}

export interface Viewer {
  server: http.Server;
  port: number;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1:port (0: a free one); `route` sees only guarded requests. */
export async function startViewer(port: number, token: string, route: Handler, onError: (e: unknown) => void): Promise<Viewer> {
  const server = http.createServer((req, res) => {
    securityHeaders(res);
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'method not allowed\n');
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!tokenMatches(url.searchParams.get('token'), token)) return sendText(res, 403, 'forbidden\n');
    Promise.resolve(route(req, res, url)).catch((e: unknown) => {
      onError(e);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections(); // the event streams never end by themselves
    }),
  };
}
