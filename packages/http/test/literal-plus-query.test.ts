import express, { type Request, type Response } from 'express';
import { literalPlusQuery, parseLiteralPlusQuery, rawQueryOf } from '../src';

/* Legacy, v1, v2 and v3 read `+` in a query string as a literal plus (the real service's Node
   clients do not encode it); everything else is express's `'simple'` parser as it was: repeated
   keys, bad `%` sequences, no prototype, the URL forms `parseurl` reads with `url.parse`. */

const app = express();
app.set('query parser', 'simple');

/** `req.query` of a request for the URL as express reads it, and with `literalPlusQuery` before. */
const express_ = (url: string): unknown => Object.assign(Object.create(app.request) as Request, { url }).query;
const literal = (url: string): unknown => {
  const req = Object.assign(Object.create(app.request) as Request, { url });
  literalPlusQuery(req, {} as Response, () => undefined);
  return req.query;
};

const URLS = [
  '/x',
  '/x?',
  '/x?a',
  '/x?a=1&a=2&a=3&b=',
  '/x?a[b]=1&a[]=2&c.d=3',
  '/x?a=%zz&b=%E0%A4&c=%&d=%2',
  '/x?%61=%62&=v&k=',
  '/x?a=1#frag&b=2',
  '/x?a=1 b=2',
  '/x?a=1\tb=2',
  'http://host/x?a=1&b=2',
  '/x?a=%20b%2Bc',
  `/x?${Array.from({ length: 1200 }, (_, i) => `k${i}=${i}`).join('&')}`,
];

describe('literalPlusQuery', () => {
  const cases = (urls: string[]) => urls.map((url) => [url.length > 60 ? `${url.slice(0, 40)}... (${url.length} chars)` : url, url]);

  it.each(cases(URLS))('reads a query string without `+` as express does: %s', (_, url) => {
    const ours = literal(url);
    expect(ours).toEqual(express_(url));
    expect(Object.getPrototypeOf(ours)).toBeNull();
  });

  it.each(cases(URLS.map((u) => u.replace(/=/g, '=+x+'))))('reads `+` as a plus, as express reads `%2B`: %s', (_, url) => {
    expect(literal(url)).toEqual(express_(url.replace(/\+/g, '%2B')));
  });

  it('reads an SDK-shaped check as written, and a `%20` as a space', () => {
    expect(literal('/licenses/check?granteeIds=ann+test@example.com&x=a%20b')).toEqual({ granteeIds: 'ann+test@example.com', x: 'a b' });
    expect(express_('/licenses/check?granteeIds=ann+test@example.com')).toEqual({ granteeIds: 'ann test@example.com' });
  });

  it('is read anew from req.url each time (a router that rewrites req.url is read as rewritten)', () => {
    const req = Object.assign(Object.create(app.request) as Request, { url: '/x?a=1' });
    literalPlusQuery(req, {} as Response, () => undefined);
    expect(req.query).toEqual({ a: '1' });
    req.url = '/x?a=2+3';
    expect(req.query).toEqual({ a: '2+3' });
  });

  it('takes the query string parseurl takes', () => {
    expect(rawQueryOf('/x')).toBeNull();
    expect(rawQueryOf('/x?a=1?b')).toBe('a=1?b');
    expect(rawQueryOf('/x?a=1#f')).toBe('a=1');
    expect(parseLiteralPlusQuery(null)).toEqual({});
    expect(parseLiteralPlusQuery(undefined)).toEqual({});
  });
});
