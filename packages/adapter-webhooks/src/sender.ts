import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  isPrivateAddress,
  WEBHOOK_TIMEOUT_MS,
  webhookTargetRefusal,
  type WebhookRequest,
  type WebhookResponse,
  type WebhookSender,
} from '@tollgate/core';

/** The one address guard (core's), re-exported for this adapter's callers. */
export { isPrivateAddress };

export interface HttpWebhookSenderOptions {
  /** Deliver to loopback and private addresses too (`WEBHOOK_ALLOW_PRIVATE=true`: tests, private networks). */
  allowPrivate: boolean;
  /**
   * Per POST, from connecting to the end of the answer (default core's `WEBHOOK_TIMEOUT_MS`, 10 s, which
   * the dispatcher's shortest lease is reckoned from: a longer one could outlast the lease).
   */
  timeoutMs?: number;
  /** How much of an answer is read (default 1 KiB); the rest is dropped. */
  maxBodyBytes?: number;
  /** Name resolution (default node:dns lookup; tests give a fixed table). */
  resolve?: (hostname: string, callback: (err: Error | null, address: string, family: number) => void) => void;
}

/**
 * POSTs webhooks with node:http(s): one try per call, a hard timeout, redirects never followed (a
 * 3xx is an answer like any other non-2xx), and a receiver's name resolved and checked at connect
 * time, so a name that resolves to a private address is refused even if it did not when the
 * endpoint was created (DNS rebinding); a literal address is judged again on every send.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;

  constructor(private readonly options: HttpWebhookSenderOptions) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.maxBodyBytes = options.maxBodyBytes ?? 1024;
  }

  refusal(raw: string): string | null {
    return webhookTargetRefusal(raw, this.options);
  }

  send(req: WebhookRequest): Promise<WebhookResponse> {
    const refusal = this.refusal(req.url);
    if (refusal) return Promise.resolve({ status: null, error: `refused: the URL ${refusal}` });
    const url = new URL(req.url);
    const allowPrivate = this.options.allowPrivate;
    const resolve =
      this.options.resolve ??
      ((hostname: string, cb: (err: Error | null, address: string, family: number) => void) =>
        dnsLookup(hostname, { all: false }, (err, address, family) => cb(err, address, family)));
    const lookup: LookupFunction = (hostname, options, callback) => {
      resolve(hostname, (err, address, family) => {
        if (err) return callback(err, '', 0);
        if (!allowPrivate && isPrivateAddress(address)) return callback(new Error('resolves to a private address'), '', 0);
        // node asks for every address when it tries several (autoSelectFamily); answer in the form asked.
        if ((options as { all?: boolean }).all) return callback(null, [{ address, family }] as LookupAddress[]);
        callback(null, address, family);
      });
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<WebhookResponse>((resolve) => {
      let settled = false;
      const done = (r: WebhookResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const body = Buffer.from(req.body, 'utf8');
      const outgoing = request(
        url,
        { method: 'POST', headers: { ...req.headers, 'content-length': String(body.length) }, lookup, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if (size < this.maxBodyBytes) chunks.push(chunk.subarray(0, this.maxBodyBytes - size));
            size += chunk.length;
          });
          res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      const timer = setTimeout(() => {
        done({ status: null, error: `no answer within ${this.timeoutMs} ms` });
        outgoing.destroy();
      }, this.timeoutMs);
      outgoing.on('error', (e) => done({ status: null, error: `could not be reached: ${e.message}` }));
      outgoing.end(body);
    });
  }
}
