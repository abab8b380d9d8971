import Busboy from 'busboy';
import type { RequestHandler } from 'express';
import { DomainError, ErrorCodes } from '@tollgate/core';
import { MAX_JSON_BYTES } from './input';

/**
 * A `multipart/form-data` body with one file in `field` (at most MAX_JSON_BYTES, UTF-8): the body
 * becomes `{ [field]: text }`. Other parts are ignored. Any other content type passes through to
 * the JSON parser. busboy streams the parts, so a large upload is cut at the limit, not buffered.
 */
export function fileUpload(field: string): RequestHandler {
  return (req, _res, next) => {
    if (!req.is('multipart/form-data')) return next();
    let parser: Busboy.Busboy;
    try {
      parser = Busboy({ headers: req.headers, limits: { files: 1, fileSize: MAX_JSON_BYTES, fields: 20, parts: 25 } });
    } catch {
      return next(
        new DomainError(ErrorCodes.VALIDATION_FAILED, 'the multipart body is malformed', [{ property: 'body', error: 'is not multipart' }]),
      );
    }
    let text: string | undefined;
    let failure: DomainError | undefined;
    let finished = false;
    // busboy may report an error and then close: the request goes on once.
    const finish = (error?: DomainError) => {
      if (finished) return;
      finished = true;
      next(error);
    };
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        failure = new DomainError(ErrorCodes.VALIDATION_FAILED, `${field} is larger than ${MAX_JSON_BYTES} bytes`, [
          { property: field, error: `is larger than ${MAX_JSON_BYTES} bytes` },
        ]);
      });
      // A body that ends inside the file: the part reports it (unhandled, it would end the process).
      stream.on('error', () => {
        failure ??= new DomainError(ErrorCodes.VALIDATION_FAILED, 'the multipart body is malformed', [
          { property: 'body', error: 'ends inside a part' },
        ]);
      });
      stream.on('end', () => {
        if (name === field) text = Buffer.concat(chunks).toString('utf8');
      });
    });
    parser.on('error', () => {
      failure ??= new DomainError(ErrorCodes.VALIDATION_FAILED, 'the multipart body is malformed', [
        { property: 'body', error: 'is malformed' },
      ]);
      finish(failure);
    });
    parser.on('close', () => {
      if (failure) return finish(failure);
      if (text === undefined)
        return finish(
          new DomainError(ErrorCodes.VALIDATION_FAILED, `a file part named ${field} is required`, [
            { property: field, error: 'is required' },
          ]),
        );
      req.body = { [field]: text };
      finish();
    });
    req.pipe(parser);
  };
}
