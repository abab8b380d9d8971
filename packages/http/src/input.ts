import type { RequestHandler } from 'express';
import { assertCleanText } from '@tollgate/core';

/** How deep a JSON body may nest: real request bodies stay far below; deeper is an attack on the parser. */
export const MAX_JSON_DEPTH = 32;

/** Bytes of a JSON body before parsing: past this, 413 (legacy and v1 bodies are small; catalog plans are the largest). */
export const MAX_JSON_BYTES = 1024 * 1024;

/**
 * The depth of a JSON text, counted on the raw bytes before it is parsed (so a body nested
 * thousands deep never reaches a recursive parser or serializer).
 */
export function jsonDepthExceeds(raw: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * The edge's guard on every route of every generation: query strings, path parameters and bodies
 * hold only text the service can keep. Runs after body parsing, before any handler.
 */
export const cleanInput: RequestHandler = (req, _res, next) => {
  // Each path parameter is named itself (`granteeId`), as the query's and the body's fields are.
  for (const [name, value] of Object.entries(req.params ?? {})) assertCleanText(value, name);
  assertCleanText(req.query, 'query');
  if (req.body !== undefined) assertCleanText(req.body, 'body');
  next();
};
