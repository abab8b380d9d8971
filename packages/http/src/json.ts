import type { Response } from 'express';

/** JSON with `Content-Type: application/json` exactly (express would add a charset). */
export function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.status(status);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** An empty response (204 or an empty 200/202), with `Content-Length: 0`. */
export function sendEmpty(res: Response, status: number): void {
  res.status(status);
  res.setHeader('Content-Length', '0');
  res.end();
}

export { iso } from '@tollgate/core';
